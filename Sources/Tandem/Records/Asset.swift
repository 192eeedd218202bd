public import Foundation

/// A file in a record field (CloudKit's `CKAsset`).
///
/// To save one, create it from a local file; `Database.save` uploads the bytes first
/// (CloudKit Web Services: assets/upload, then a POST of the bytes, then the receipt in the
/// record). A fetched asset has a `downloadURL` instead of a file: `Container.download(_:to:)`
/// writes it to a local file.
///
/// ```swift
/// note["photo"] = Asset(fileURL: URL(fileURLWithPath: "/tmp/photo.jpg"))
/// let saved = try await database.save(note)
/// try await container.download(saved["photo"] as! Asset, to: URL(fileURLWithPath: "/tmp/copy.jpg"))
/// ```
public struct Asset: Sendable, Hashable {
    /// The local file to upload; nil on an asset read from the server.
    public var fileURL: URL?
    /// Where the server serves the bytes (set on fetched records).
    public internal(set) var downloadURL: URL?
    /// Hex SHA-256 of the bytes, set by the server.
    public internal(set) var fileChecksum: String?
    /// Bytes, set by the server.
    public internal(set) var size: Int64?
    /// The upload receipt, between upload and save.
    var receipt: String?

    public init(fileURL: URL) { self.fileURL = fileURL }

    init(fileChecksum: String, size: Int64, receipt: String?, downloadURL: URL?) {
        self.fileChecksum = fileChecksum
        self.size = size
        self.receipt = receipt
        self.downloadURL = downloadURL
    }
}
