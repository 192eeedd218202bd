import Testing
@testable import TandemServer

/// The one-time holder of a new API token's secret (decisions C52).
@Suite struct ConsoleFlashTests {
    @Test func aSecretIsTakenOnceBySessionAndContainerBeforeItExpires() {
        let flash = ConsoleFlash()
        let session: [UInt8] = [1, 2, 3], other: [UInt8] = [4, 5, 6]
        flash.put(session: session, container: "c", secret: "tdk_one", now: 1000)
        #expect(flash.take(session: other, container: "c", now: 1001) == nil, "another session never sees it")
        #expect(flash.take(session: session, container: "d", now: 1001) == nil, "nor another container's page")
        #expect(flash.take(session: session, container: "c", now: 1001) == "tdk_one")
        #expect(flash.take(session: session, container: "c", now: 1002) == nil, "shown once")

        flash.put(session: session, container: "c", secret: "tdk_two", now: 1000)
        #expect(flash.take(session: session, container: "c", now: 1000 + ConsoleFlash.lifetimeMilliseconds) == nil, "expired")
        flash.put(session: session, container: "c", secret: "tdk_old", now: 1000)
        flash.put(session: session, container: "c", secret: "tdk_new", now: 1000)
        #expect(flash.take(session: session, container: "c", now: 1001) == "tdk_new", "a session's new secret replaces its old one")
    }

    @Test func theOldestIsPushedOutPastTheCapacity() {
        let flash = ConsoleFlash()
        for n in 0...ConsoleFlash.capacity {
            flash.put(session: [UInt8(n % 256), UInt8(n / 256)], container: "c", secret: "tdk_\(n)", now: 1000)
        }
        #expect(flash.take(session: [0, 0], container: "c", now: 1001) == nil)
        #expect(flash.take(session: [1, 0], container: "c", now: 1001) == "tdk_1")
        let last = ConsoleFlash.capacity
        #expect(flash.take(session: [UInt8(last % 256), UInt8(last / 256)], container: "c", now: 1001) == "tdk_\(last)")
    }
}
