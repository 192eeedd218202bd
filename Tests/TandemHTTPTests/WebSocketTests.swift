import Foundation
import FoundationNetworking
import Testing
import TandemHTTP

/// WebSocket transport end to end over loopback: `WebSocketClient` (or raw frames) against an
/// `HTTPServer` with a `WebSocketResponder`.
@Suite struct WebSocketTests {
    @Test func echoesTextAndBinaryIncludingOneMegabyteMessages() async throws {
        let server = try startServer(webSocketResponder: TestWebSocketResponder())
        defer { server.shutdown() }
        let client = try await WebSocketClient.connect(to: wsURL(server))
        var events = client.events.makeAsyncIterator()
        let big = TestResponder.pattern(count: 1 << 20)
        let bigText = String(repeating: "héllo wörld ", count: 90_000)
        let sent: [WebSocketMessage] = [.text("hello"), .binary([0, 1, 2, 255]), .text(""), .binary(big), .text(bigText)]
        for message in sent {
            switch message {
            case .text(let text): #expect(await client.send(text: text) == .queued)
            case .binary(let bytes): #expect(await client.send(binary: bytes) == .queued)
            }
        }
        for message in sent {
            #expect(await events.next() == .message(message))
        }
        client.close()
        #expect(await events.next() == .closed(WebSocketClose(code: 1000)))
        #expect(await events.next() == nil)
    }

    @Test func fragmentedFramesAreReassembledAndOversizedMessagesClosedWith1009() throws {
        let server = try startServer(webSocketResponder: TestWebSocketResponder()) {
            $0.webSocket.maxMessageBytes = 1000
        }
        defer { server.shutdown() }
        let raw = try RawHTTPClient(port: server.port)
        try raw.upgrade(path: "/ws")
        try raw.sendFrame(opcode: 1, Array("frag".utf8), fin: false)
        try raw.sendFrame(opcode: 0, Array("ment".utf8), fin: false)
        try raw.sendFrame(opcode: 0, Array("ed".utf8))
        let echo = try raw.readFrame()
        #expect(echo.fin && echo.opcode == 1 && echo.payload == Array("fragmented".utf8))
        try raw.sendFrame(opcode: 2, [UInt8](repeating: 7, count: 600), fin: false)
        try raw.sendFrame(opcode: 0, [UInt8](repeating: 7, count: 600))
        let close = try raw.readFrame()
        #expect(close.opcode == 8)
        #expect(close.payload.count >= 2 && Int(close.payload[0]) << 8 | Int(close.payload[1]) == 1009)
    }

    @Test func tenThousandMessagesArriveInOrderOneAtATimePerConnection() async throws {
        let responder = TestWebSocketResponder()
        // Room for every echo: the client sends without waiting for them, and the server must
        // not take it for a slow consumer on a busy machine.
        let server = try startServer(webSocketResponder: responder) { $0.webSocket.sendQueueMessages = 20_000 }
        defer { server.shutdown() }
        let client = try await WebSocketClient.connect(to: wsURL(server))
        let count = 10_000
        let sender = Task {
            for index in 0..<count { await client.send(text: "\(index)") }
        }
        var events = client.events.makeAsyncIterator()
        var outOfOrder = 0
        for index in 0..<count {
            let event = await events.next()
            if event != .message(.text("\(index)")) {
                if outOfOrder < 3 { Issue.record("message \(index): got \(String(describing: event))") }
                outOfOrder += 1
            }
        }
        await sender.value
        #expect(outOfOrder == 0)
        #expect(responder.overlappingCalls == 0)
        client.close()
    }

    @Test func twoHundredConcurrentClients() async throws {
        let responder = TestWebSocketResponder()
        let server = try startServer(webSocketResponder: responder)
        defer { server.shutdown() }
        let results = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<200 {
                group.addTask {
                    let client = try await WebSocketClient.connect(to: wsURL(server, "/ws?client=\(index)"))
                    var events = client.events.makeAsyncIterator()
                    var ok = true
                    for round in 0..<5 {
                        await client.send(text: "\(index)-\(round)")
                        let echo = await events.next()
                        ok = ok && echo == .message(.text("\(index)-\(round)"))
                    }
                    client.close()
                    let end = await events.next()
                    ok = ok && end == .closed(WebSocketClose(code: 1000))
                    return ok
                }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.count == 200 && results.allSatisfy { $0 })
        #expect(eventually { server.openWebSockets == 0 })
        #expect(responder.overlappingCalls == 0)
    }

    @Test func refusalAfterAnAsyncDecisionClosesWithItsCodeAndDropsHeldMessages() async throws {
        let responder = TestWebSocketResponder(decisionDelay: 300)
        let server = try startServer(webSocketResponder: responder)
        defer { server.shutdown() }

        let refused = try await WebSocketClient.connect(to: wsURL(server), headers: [("Authorization", "Bearer deny")])
        await refused.send(text: "held, then dropped")
        var refusedEvents = refused.events.makeAsyncIterator()
        #expect(await refusedEvents.next() == .closed(WebSocketClose(code: 4403, reason: "forbidden")))

        // Messages sent before an acceptance are held, then delivered in order.
        let accepted = try await WebSocketClient.connect(to: wsURL(server), headers: [("Authorization", "Bearer ok")])
        for index in 0..<20 { await accepted.send(text: "early \(index)") }
        var events = accepted.events.makeAsyncIterator()
        for index in 0..<20 {
            #expect(await events.next() == .message(.text("early \(index)")))
        }
        #expect(responder.decisions == 2)
        #expect(responder.accepted.count == 1)
        accepted.close()
    }

    @Test func upgradesTheResponderDoesNotWantAreRefusedBeforeTheHandshake() async throws {
        let server = try startServer(webSocketResponder: TestWebSocketResponder())
        defer { server.shutdown() }
        await #expect(throws: WebSocketError.self) {
            _ = try await WebSocketClient.connect(to: wsURL(server, "/elsewhere"))
        }
        let plain = try startServer()
        defer { plain.shutdown() }
        await #expect(throws: WebSocketError.self) {
            _ = try await WebSocketClient.connect(to: wsURL(plain))
        }
        // HTTP on the same servers is unaffected.
        #expect(try await fetch(url(server, "/after")).1.statusCode == 200)
        #expect(try await fetch(url(plain, "/after")).1.statusCode == 200)
    }

    @Test func serverInitiatedCloseCarriesCodeAndReason() async throws {
        let responder = TestWebSocketResponder()
        let server = try startServer(webSocketResponder: responder)
        defer { server.shutdown() }
        let client = try await WebSocketClient.connect(to: wsURL(server))
        await client.send(text: "before")
        await client.send(text: "close:4000:bye now")
        var events = client.events.makeAsyncIterator()
        #expect(await events.next() == .message(.text("before")))
        #expect(await events.next() == .closed(WebSocketClose(code: 4000, reason: "bye now")))
        #expect(eventually { server.openWebSockets == 0 })
        #expect(eventually { responder.accepted.first.flatMap { responder.close(of: $0.id) } != nil })
    }

    @Test func aClientThatStopsReadingLosesDroppableMessagesThenIsClosedWhileOthersAreServed() async throws {
        let responder = TestWebSocketResponder()
        let server = try startServer(webSocketResponder: responder) {
            $0.webSocket.sendQueueMessages = 32
            $0.webSocket.sendQueueBytes = 256 * 1024
        }
        defer { server.shutdown() }
        let stalled = try RawHTTPClient(port: server.port, receiveBuffer: 4096)
        try stalled.upgrade(path: "/ws?who=stalled")
        let healthy = try await WebSocketClient.connect(to: wsURL(server, "/ws?who=healthy"))
        var healthyEvents = healthy.events.makeAsyncIterator()
        #expect(eventually { responder.connection(withQuery: "who=stalled") != nil })
        let connection = try #require(responder.connection(withQuery: "who=stalled"))

        let chunk = [UInt8](repeating: 42, count: 16 * 1024)
        var droppableSent = 0
        while connection.droppedMessages == 0 && droppableSent < 100_000 {
            let result = connection.send(binary: chunk, droppable: true)
            #expect(result != .closed)
            if result == .closed { break }  // one issue, not 100,000
            droppableSent += 1
        }
        #expect(connection.droppedMessages > 0)
        #expect(server.droppedWebSocketMessages == connection.droppedMessages)

        // The stalled peer does not slow anyone else down.
        await healthy.send(text: "still here")
        #expect(await healthyEvents.next() == .message(.text("still here")))
        #expect(try await fetch(url(server, "/http-too")).1.statusCode == 200)

        var reliableResults: [WebSocketSendResult] = []
        while reliableResults.last != .closed && reliableResults.count < 1000 {
            reliableResults.append(connection.send(binary: chunk))
        }
        #expect(reliableResults.last == .closed)
        #expect(server.slowConsumerCloses == 1)
        // lws may wait up to `WebSocketChannel.closeTimeout` (5 s) for the close handshake of
        // a peer that reads nothing before it drops the connection and the responder hears of it.
        #expect(eventually(within: 15) { responder.close(of: connection.id)?.code == WebSocketClose.slowConsumer })
        #expect(connection.send(text: "late") == .closed)
        #expect(stalled.waitForClose())

        await healthy.send(text: "after")
        #expect(await healthyEvents.next() == .message(.text("after")))
        #expect(server.openWebSockets == 1)
        healthy.close()
    }

    @Test func keepAlivePingsAndClosesAPeerThatStopsAnswering() async throws {
        let responder = TestWebSocketResponder()
        let server = try startServer(webSocketResponder: responder) {
            $0.webSocket.pingInterval = 1
            $0.webSocket.pongTimeout = 2
        }
        defer { server.shutdown() }
        let live = try await WebSocketClient.connect(to: wsURL(server, "/ws?who=live"))
        let dead = try RawHTTPClient(port: server.port)
        try dead.upgrade(path: "/ws?who=dead")
        let ping = try dead.readFrame()
        #expect(ping.opcode == 9)
        // It never answers: closed about 2 s after the last sign of life.
        #expect(dead.waitForClose())
        #expect(eventually { responder.connection(withQuery: "who=dead").flatMap { responder.close(of: $0.id) } != nil })

        // The client library answers pings, so the live connection outlasts several timeouts.
        try await Task.sleep(for: .seconds(3))
        var events = live.events.makeAsyncIterator()
        await live.send(text: "alive")
        #expect(await events.next() == .message(.text("alive")))
        live.close()
    }

    @Test func shutdownClosesWebSocketsWith1001() async throws {
        let server = try startServer(webSocketResponder: TestWebSocketResponder())
        let client = try await WebSocketClient.connect(to: wsURL(server))
        var events = client.events.makeAsyncIterator()
        await client.send(text: "ping")
        #expect(await events.next() == .message(.text("ping")))
        let stopped = Task.detached { server.shutdown() }
        let close = await events.next()
        guard case .closed(let reason) = close else {
            Issue.record("expected a close, got \(String(describing: close))")
            return
        }
        #expect(reason.code == 1001)
        await stopped.value
        #expect(server.openWebSockets == 0)
    }
}
