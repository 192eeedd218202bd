import Foundation

extension AssetFiles {
    /// Content-addressed files for group session journals, apart from record assets so that
    /// deleting a journal's files never touches a record's (decisions D37, G7).
    public static func journal(dataDirectory: String) throws -> AssetFiles {
        try AssetFiles(directory: dataDirectory + "/journal")
    }

    /// Deletes every file (the directory stays, with its `tmp/`).
    public func removeAll() {
        let manager = FileManager.default
        for name in (try? manager.contentsOfDirectory(atPath: directory)) ?? [] {
            try? manager.removeItem(atPath: directory + "/" + name)
        }
        try? manager.createDirectory(atPath: directory + "/tmp", withIntermediateDirectories: true)
    }
}
