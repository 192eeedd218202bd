import Foundation
import Testing
import TandemCore

/// `UUID.random()`: version 4, RFC 4122 variant, and not a constant (Foundation's `UUID()`
/// gave all zeros out of descriptors; stop 44's third review).
@Suite struct RandomUUIDTests {
    @Test func randomUUIDsAreVersionFourAndDistinct() {
        let made = (0..<1_000).map { _ in UUID.random() }
        #expect(Set(made).count == made.count)
        for uuid in made {
            #expect(uuid.uuid.6 >> 4 == 4, "\(uuid)")
            #expect(uuid.uuid.8 >> 6 == 2, "\(uuid)")
            #expect(uuid != UUID(uuid: (0, 0, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 0)))
        }
    }
}
