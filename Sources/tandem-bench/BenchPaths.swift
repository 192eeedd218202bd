import Foundation

/// Where the bench finds the `tandem` executable and keeps its cached data.
enum BenchPaths {
    /// This executable's real path (`.build/<triple>/release/tandem-bench`).
    static var executable: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL.path
    }

    /// The `tandem` CLI built beside this executable by the same `swift build -c release`.
    static var tandem: String {
        URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent("tandem").path
    }

    /// `.build/bench-data`: the `.build` folder this executable lives in, else `./.build`.
    static var cacheRoot: String {
        var url = URL(fileURLWithPath: executable).deletingLastPathComponent()
        while url.path != "/" {
            if url.lastPathComponent == ".build" { return url.appendingPathComponent("bench-data").path }
            url.deleteLastPathComponent()
        }
        return FileManager.default.currentDirectoryPath + "/.build/bench-data"
    }

    /// A new empty directory under the system temporary directory.
    static func temporaryDirectory(_ label: String) throws -> String {
        let path = NSTemporaryDirectory() + "tandem-bench-\(label)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    static func remove(_ path: String) {
        try? FileManager.default.removeItem(atPath: path)
    }
}
