import Foundation
import TandemCore
import TandemSchema
import TandemServer
import TandemStore

/// `tandem schema validate FILE` and `tandem schema diff OLD NEW` work on files alone;
/// `import`, `export` and `promote` work on a container's schemas in the data directory.
enum SchemaCommand {
    static let usage = """
        usage: tandem schema validate FILE
               tandem schema diff OLD NEW
               tandem schema import FILE --container ID --environment development|production [--force]
               tandem schema export --container ID --environment development|production
               tandem schema promote --container ID [--force]
        """

    /// Runs `schema <words>`; returns the exit status: 0 on success, 1 when a file does not
    /// parse or cannot be read (`FILE:LINE:COLUMN: message` on standard error) or the server
    /// side refuses. Throws `UsageError` for a malformed command.
    static func run(_ words: [String], options: Options, store: StoreLocation) throws -> Int32 {
        do {
            switch (words.first, words.count) {
            case ("validate", 2):
                let schema = try load(words[1])
                print("\(words[1]): valid; record types: \(schema.recordTypes.count), custom roles: \(schema.roles.count)")
            case ("diff", 3):
                let old = try load(words[1]), new = try load(words[2])
                print(old.changes(to: new).report, terminator: "")
            case ("import", 2):
                let container = try self.container(options), environment = try self.environment(options)
                let schema = try load(words[1])
                let outcome = try CommandLine.withStore(store) {
                    try SchemaService(store: $0).importSchema(schema.ckdb, file: words[1], container: container,
                                                             environment: environment, force: options.flag("force"))
                }
                report(outcome, into: "\(container) \(environment.rawValue)")
            case ("export", 1):
                let container = try self.container(options), environment = try self.environment(options)
                print(try CommandLine.withStore(store) { try SchemaService(store: $0).export(container: container, environment: environment) },
                      terminator: "")
            case ("promote", 1):
                let container = try self.container(options)
                let outcome = try CommandLine.withStore(store) {
                    try SchemaService(store: $0).promote(container: container, force: options.flag("force"))
                }
                report(outcome, into: "\(container) production")
            default:
                throw UsageError(usage)
            }
            return 0
        } catch let error as SchemaError {
            CommandLine.fail(error.description)
            return 1
        }
    }

    static func report(_ outcome: SchemaService.Outcome, into target: String) {
        print(outcome.changes.report, terminator: "")
        for (type, count) in outcome.reindexed.sorted(by: { $0.key < $1.key }) {
            print("reindexed \(count) \(type) record\(count == 1 ? "" : "s")")
        }
        for (type, names) in outcome.unsearchable.sorted(by: { $0.key < $1.key }) {
            print("not searchable: \(names.count) \(type) record\(names.count == 1 ? "" : "s") whose SEARCHABLE fields are over the full-text "
                  + "limit (found by full-text search once saved smaller): \(names.prefix(20).joined(separator: ", "))\(names.count > 20 ? ", …" : "")")
        }
        // Says what happened: an identical schema leaves the environment as it was (F2).
        print(outcome.changes.isEmpty ? "schema of \(target) unchanged" : "schema of \(target) updated")
    }

    static func container(_ options: Options) throws -> String {
        guard let container = options.value("container") else { throw UsageError("needs --container ID\n" + usage) }
        return container
    }

    static func environment(_ options: Options) throws -> Environment {
        guard let value = options.value("environment"), let environment = Environment(rawValue: value) else {
            throw UsageError("needs --environment development|production")
        }
        return environment
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
