public import Foundation

/// Downloaded assets kept on the device by checksum, so an asset is fetched once
/// (CloudKit keeps fetched `CKAsset` files in its own cache; Tandem's is explicit).
///
/// ```swift
/// let cache = AssetCache(container: container, directory: URL(fileURLWithPath: "Caches/assets"))
/// let file = try await cache.file(for: note["photo"] as! Asset)   // downloads the first time only
/// ```
///
/// Files are named by the asset's `fileChecksum` (hex SHA-256, checked to be hex) and reused
/// while their size matches; nothing is evicted (delete the directory to empty it). Safe to
/// use from several tasks: a download is written to a temporary file and moved into place.
public final class AssetCache: Sendable {
    /// Downloads go through this container's credentials.
    public let container: Container
    /// Where the files are kept (created when missing).
    public let directory: URL

    /// A cache in `directory` (nothing is read or created until the first `file(for:)`).
    public init(container: Container, directory: URL) {
        self.container = container
        self.directory = directory
    }

    /// A local file holding the asset's bytes: the cached one, or downloaded now.
    /// - Throws: `assetNotAvailable` for an asset without `downloadURL` or checksum (not
    ///   fetched from the server); the download's errors; `internalError` when the directory
    ///   cannot be written.
    public func file(for asset: Asset) async throws(TandemError) -> URL {
        guard let checksum = asset.fileChecksum, !checksum.isEmpty, checksum.allSatisfy(\.isHexDigit) else {
            throw TandemError(.assetNotAvailable, "the asset has no checksum (fetch the record first)")
        }
        let file = directory.appendingPathComponent(checksum)
        let attributes = try? FileManager.default.attributesOfItem(atPath: file.path)
        if let size = attributes?[.size] as? Int64, asset.size == nil || size == asset.size { return file }
        do { try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true) } catch {
            throw TandemError(.internalError, "cannot create \(directory.path): \(error)")
        }
        let partial = directory.appendingPathComponent(".\(checksum).\(UUID().uuidString)")
        try await container.download(asset, to: partial)
        do {
            _ = try? FileManager.default.removeItem(at: file)
            try FileManager.default.moveItem(at: partial, to: file)
        } catch {
            throw TandemError(.internalError, "cannot move the download into \(file.path): \(error)")
        }
        return file
    }
}
