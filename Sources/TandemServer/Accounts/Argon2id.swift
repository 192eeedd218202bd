import CArgon2
import Dispatch
import TandemCrypto

/// Argon2id password hashes over libargon2 (the reference implementation, RFC 9106), in the PHC
/// string format `$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>`, so each stored hash names the
/// parameters it was made with and can be upgraded when they change (decisions A3).
///
/// Hashing is memory-hard by design: at most `concurrentHashes` run at once, so a burst of
/// sign-ins queues instead of allocating `memory × workers`.
struct Argon2id: Sendable {
    /// Cost parameters. Defaults: OWASP's Password Storage Cheat Sheet's first Argon2id choice
    /// (19 MiB, 2 passes, 1 lane).
    struct Parameters: Sendable, Hashable, CustomStringConvertible {
        /// Memory in KiB (`m`).
        var memoryKiB: UInt32 = 19_456
        /// Passes over memory (`t`).
        var iterations: UInt32 = 2
        /// Lanes (`p`).
        var parallelism: UInt32 = 1

        var description: String { "m=\(memoryKiB),t=\(iterations),p=\(parallelism)" }

        /// Parses `m=19456,t=2,p=1` (any order; every key needed); nil when malformed or below
        /// libargon2's minimums (8 KiB per lane, 1 pass).
        init?(_ text: some StringProtocol) {
            var values: [String: UInt32] = [:]
            for pair in text.split(separator: ",") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, let value = UInt32(parts[1]) else { return nil }
                values[String(parts[0])] = value
            }
            guard values.count == 3, let m = values["m"], let t = values["t"], let p = values["p"],
                  p >= 1, p <= 64, t >= 1, t <= 100, m >= 8 * p, m <= 4_194_304 else { return nil }
            memoryKiB = m
            iterations = t
            parallelism = p
        }

        init() {}
    }

    static let saltBytes = 16
    static let hashBytes = 32
    /// Longest password accepted, in UTF-8 bytes (longer input is refused, not truncated).
    static let maximumPasswordBytes = 1024

    let parameters: Parameters
    private let gate: DispatchSemaphore

    init(parameters: Parameters = Parameters(), concurrentHashes: Int = 2) {
        self.parameters = parameters
        gate = DispatchSemaphore(value: concurrentHashes)
    }

    /// A new encoded hash of `password` with a random salt.
    /// - Throws: `Argon2Error` when libargon2 refuses (out of memory).
    func hash(_ password: String) throws -> String {
        let salt = Digest.randomBytes(Self.saltBytes)
        let bytes = Array(password.utf8)
        let length = argon2_encodedlen(parameters.iterations, parameters.memoryKiB, parameters.parallelism,
                                       UInt32(Self.saltBytes), UInt32(Self.hashBytes), Argon2_id)
        var encoded = [CChar](repeating: 0, count: length + 1)
        gate.wait()
        defer { gate.signal() }
        let result = argon2id_hash_encoded(parameters.iterations, parameters.memoryKiB, parameters.parallelism, bytes, bytes.count,
                                           salt, salt.count, Self.hashBytes, &encoded, encoded.count)
        guard result == ARGON2_OK.rawValue else { throw Argon2Error(code: result) }
        return String(decoding: encoded.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether `password` matches `encoded` (constant-time comparison inside libargon2). A
    /// malformed `encoded` never matches.
    func verify(_ password: String, against encoded: String) -> Bool {
        let bytes = Array(password.utf8)
        gate.wait()
        defer { gate.signal() }
        return argon2id_verify(encoded, bytes, bytes.count) == ARGON2_OK.rawValue
    }

    /// Whether `encoded` was made with other parameters than the current ones (then the next
    /// successful sign-in stores a new hash).
    func needsRehash(_ encoded: String) -> Bool {
        let fields = encoded.split(separator: "$")
        guard fields.count == 5, fields[0] == "argon2id", fields[1] == "v=19", let stored = Parameters(fields[2]) else { return true }
        return stored != parameters
    }
}

/// libargon2 refused to hash (its error code and message).
struct Argon2Error: Error, CustomStringConvertible {
    var code: Int32
    var description: String { "argon2: " + String(cString: argon2_error_message(code)) }
}
