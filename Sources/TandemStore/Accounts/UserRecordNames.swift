internal import TandemCrypto

/// CloudKit user record names: `_` followed by 32 lowercase hex digits (16 random bytes). Both
/// stores name new accounts with it (decisions P30).
package enum UserRecordNames {
    package static func make() -> String {
        "_" + Digest.hex(Digest.randomBytes(16))
    }
}
