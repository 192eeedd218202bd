import Foundation
import Testing
@testable import TandemServer
import TandemTestSupport

/// `secret.key` shared by several nodes through symbolic links (N61): the key is made at the
/// link's target, nodes get the same key, and a file that is not a key is never replaced.
struct ServerSecretTests {
    @Test func aLinkToAKeyNotMadeYetGetsTheKeyAtItsTargetForEveryNode() throws {
        let root = try ExitCleanup.temporaryDirectory("tandem-secret")
        let shared = root + "/shared", a = root + "/a", b = root + "/b"
        for directory in [shared, a, b] { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        try FileManager.default.createSymbolicLink(atPath: a + "/secret.key", withDestinationPath: shared + "/secret.key")
        try FileManager.default.createSymbolicLink(atPath: b + "/secret.key", withDestinationPath: "../shared/secret.key")

        let first = try ServerSecret.load(directory: a)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: a + "/secret.key") == shared + "/secret.key", "still a link")
        #expect(FileManager.default.contents(atPath: shared + "/secret.key").map { [UInt8]($0) } == first)
        #expect(DataDirectoryTests.mode(shared + "/secret.key") == 0o600)
        #expect(try ServerSecret.load(directory: b) == first, "a relative link reaches the same key")
        #expect(try ServerSecret.load(directory: a) == first)
        #expect(try FileManager.default.contentsOfDirectory(atPath: shared) == ["secret.key"], "nothing left aside")

        // A chain of links reaches the same key.
        let c = root + "/c"
        try FileManager.default.createDirectory(atPath: c, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: c + "/secret.key", withDestinationPath: a + "/secret.key")
        #expect(try ServerSecret.load(directory: c) == first)
    }

    @Test func aChainOfLinksToAKeyNotMadeYetGetsItAtTheEnd() throws {
        let root = try ExitCleanup.temporaryDirectory("tandem-secret-chain")
        try FileManager.default.createDirectory(atPath: root + "/shared", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: root + "/link2", withDestinationPath: "shared/secret.key")
        try FileManager.default.createSymbolicLink(atPath: root + "/secret.key", withDestinationPath: root + "/link2")
        let key = try ServerSecret.load(directory: root)
        #expect(FileManager.default.contents(atPath: root + "/shared/secret.key").map { [UInt8]($0) } == key)
    }

    @Test func aFileThatIsNotAKeyIsAnErrorAndStaysAsItWas() throws {
        let directory = try ExitCleanup.temporaryDirectory("tandem-secret-bad")
        let mangled = Data(repeating: 7, count: 33)
        FileManager.default.createFile(atPath: directory + "/secret.key", contents: mangled)
        #expect(throws: (any Error).self) { try ServerSecret.load(directory: directory) }
        #expect(FileManager.default.contents(atPath: directory + "/secret.key") == mangled)
    }
}
