import Testing
@testable import TandemHTTP

/// The send-queue policy on its own (DESIGN.md section 3).
@Suite struct WebSocketQueueTests {
    private func message(_ size: Int, droppable: Bool) -> OutboundMessage {
        OutboundMessage(payload: [UInt8](repeating: 0, count: size), isBinary: true, droppable: droppable)
    }

    @Test func droppableMessagesGiveWayAndAReliableOneThatStillDoesNotFitOverflows() {
        var queue = OutboundQueue(maxMessages: 3, maxBytes: 100)
        #expect(queue.offer(message(40, droppable: true)) == .queued(dropped: 0))
        #expect(queue.offer(message(40, droppable: false)) == .queued(dropped: 0))
        #expect(queue.offer(message(40, droppable: true)) == .droppedOffered)
        #expect(queue.offer(message(50, droppable: false)) == .queued(dropped: 1))
        #expect(queue.count == 2 && queue.bytes == 90)
        #expect(queue.offer(message(20, droppable: false)) == .overflow(dropped: 0))
        #expect(queue.pop()?.payload.count == 40)
        #expect(queue.offer(message(20, droppable: false)) == .queued(dropped: 0))
    }

    @Test func anEmptyQueueTakesAMessageLargerThanItsByteLimit() {
        var queue = OutboundQueue(maxMessages: 4, maxBytes: 10)
        #expect(queue.offer(message(50, droppable: false)) == .queued(dropped: 0))
        #expect(queue.offer(message(1, droppable: false)) == .overflow(dropped: 0))
    }

    @Test func closeReasonsAreCutAtACharacterBoundary() {
        let close = WebSocketClose(code: 4000, reason: String(repeating: "é", count: 100))
        #expect(close.reasonBytes.count == 122)
        #expect(String(validating: close.reasonBytes, as: UTF8.self) != nil)
    }
}
