public import Foundation
import TandemCrypto

/// This device's P-256 signing key: the leaf it holds in every identity tree of its user (D24),
/// and what signs identity-proof challenges. Keep one per device, in a file only its user can
/// read; register its public key once with `Container.registerDevice(_:)`.
public struct DeviceKey: Sendable {
    let key: P256.PrivateKey

    /// A new random key (not saved).
    /// - Throws: `TandemError.internalError` when libcrypto cannot make one.
    public init() throws(TandemError) {
        do { key = try P256.PrivateKey() } catch { throw TandemError(.internalError, "cannot generate a P-256 key: \(error)") }
    }

    /// The key stored at `file` (DER), made and saved there (mode 0600) when the file does not exist.
    /// - Throws: `TandemError.internalError` when the file cannot be read or written, or holds
    ///   something other than a P-256 private key.
    public init(file: URL) throws(TandemError) {
        let manager = FileManager.default
        if manager.fileExists(atPath: file.path) {
            let bytes: Data
            do { bytes = try Data(contentsOf: file) } catch { throw TandemError(.internalError, "cannot read \(file.path): \(error)") }
            do { key = try P256.PrivateKey(derRepresentation: [UInt8](bytes)) } catch {
                throw TandemError(.internalError, "\(file.path) does not hold a P-256 private key")
            }
            return
        }
        do { key = try P256.PrivateKey() } catch { throw TandemError(.internalError, "cannot generate a P-256 key: \(error)") }
        do {
            try manager.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        } catch { throw TandemError(.internalError, "cannot create \(file.deletingLastPathComponent().path): \(error)") }
        guard manager.createFile(atPath: file.path, contents: Data(key.derRepresentation), attributes: [.posixPermissions: 0o600]) else {
            throw TandemError(.internalError, "cannot save the device key at \(file.path)")
        }
    }

    /// The public key: uncompressed X9.63 (65 bytes, starting 0x04).
    public var publicKey: Data { Data(key.publicKey) }

    /// ECDSA P-256 / SHA-256 signature of `data`, DER encoded.
    public func signature(for data: Data) throws(TandemError) -> Data {
        do { return Data(try key.signature(for: [UInt8](data))) } catch {
            throw TandemError(.internalError, "cannot sign: \(error)")
        }
    }
}
