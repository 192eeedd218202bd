import Foundation
import TandemSchema

/// `tandem schema validate FILE` and `tandem schema diff OLD NEW`: the `.ckdb` language on
/// files; no data directory needed.
enum SchemaCommand {
    /// Runs `schema <words>`; returns the exit status: 0 when the files parse, 1 when one does
    /// not or cannot be read (`FILE:LINE:COLUMN: message` on standard error). Throws
    /// `UsageError` for a malformed command.
    static func run(_ words: [String]) throws -> Int32 {
        do {
            switch (words.first, words.count) {
            case ("validate", 2):
                let schema = try load(words[1])
                print("\(words[1]): valid; record types: \(schema.recordTypes.count), custom roles: \(schema.roles.count)")
            case ("diff", 3):
                let old = try load(words[1]), new = try load(words[2])
                print(old.changes(to: new).report, terminator: "")
            default:
                throw UsageError("usage: tandem schema validate FILE | tandem schema diff OLD NEW")
            }
            return 0
        } catch let error as SchemaError {
            CommandLine.fail(error.description)
            return 1
        }
    }

    /// Reads and parses a file; an unreadable file is a `SchemaError` at 1:1 so every failure
    /// has the same `FILE:LINE:COLUMN: message` shape.
    static func load(_ path: String) throws -> Schema {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SchemaError(file: path, at: SourceLocation(line: 1, column: 1), message: "cannot read the file")
        }
        return try Schema(parsing: String(decoding: data, as: UTF8.self), file: path)
    }
}
