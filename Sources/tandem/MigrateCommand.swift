import Foundation
import TandemPostgres
import TandemServer
import TandemStore
import TandemStoreCopy

/// `tandem migrate`: moves a whole store between a data directory (SQLite) and PostgreSQL
/// (issue 19; decisions P40–P43). Progress goes to standard error, one line a batch.
enum MigrateCommand {
    static let usage = """
          tandem migrate --from DIR|postgres://… [--from-data DIR] --to DIR|postgres://… [--to-data DIR] [--force]
                         (copies every table, identity position and file, then verifies counts, checksums and files;
                          --from-data / --to-data: the directory of a side's assets, avatars and secret.key, the server's --data:
                          needed for a postgres:// side, for a directory only when the server's --data was another one;
                          a PostgreSQL target is ANALYZEd after the copy;
                          refuses a target holding data unless --force, which replaces it; stop the servers of both first)
        """

    /// The options `migrate` takes. `--data` and `--store` are every command's, and mean nothing here.
    static let options: Set<String> = ["from", "to", "from-data", "to-data", "force", "data", "store"]

    /// Runs `migrate`; nil when the words are not it.
    static func run(_ options: Options) throws -> Int32? {
        guard options.words == ["migrate"] else { return nil }
        guard let from = options.value("from"), let to = options.value("to") else {
            throw UsageError("migrate needs --from DIR|postgres://… and --to DIR|postgres://…")
        }
        let source = try endpoint(from, data: options.value("from-data"), flag: "from-data")
        let target = try endpoint(to, data: options.value("to-data"), flag: "to-data")
        _ = try StoreCopy.run(from: source, to: target, force: options.flag("force")) { line in CommandLine.fail(line) }
        return 0
    }

    /// A `postgres://` or `postgresql://` URL (any letter case) with its files' directory, or a
    /// SQLite store's directory with its files in `data` when given (the server's `--data`
    /// when it was not the store's directory: `serve --store DIR1 --data DIR2`; P58), else in
    /// the same directory.
    static func endpoint(_ value: String, data: String?, flag: String) throws -> StoreCopy.Endpoint {
        guard PostgresURL.isPostgres(value) else {
            // A PostgreSQL server's data directory holds its files, not its store (review 47).
            if flag == "from-data", let url = PostgresMarker.url(in: value), !FileManager.default.fileExists(atPath: value + "/tandem.sqlite") {
                throw UsageError("\(value) is the data directory of a PostgreSQL store: give --from \(StoreArgument.postgres(url).shellWord) "
                                 + "--from-data \(value)")
            }
            return .directory(value, files: data)
        }
        guard let data else { throw UsageError("a postgres:// side needs --\(flag) DIR: the directory of its assets, avatars and secret.key") }
        return .postgres(url: PostgresURL.normalized(value), directory: data)
    }
}
