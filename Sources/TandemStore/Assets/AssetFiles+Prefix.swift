import Foundation

extension AssetFiles {
    /// The first `count` bytes of a stored file (fewer for a shorter file), or nil if there is
    /// none: enough to tell an image by its magic bytes without reading the whole asset (C65).
    public func prefix(checksum: String, count: Int) -> [UInt8]? {
        guard let path = path(forChecksum: checksum), let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: count) else { return nil }
        return [UInt8](data ?? Data())
    }
}
