/// How large each figure's runs are: the full figures, a quick look, or a smoke run that only
/// proves every figure still runs (tiny sizes, well under a minute; `make test` runs it).
enum BenchSize: String, Sendable {
    case full, quick, smoke

    /// The value for this size.
    func pick<T>(full: T, quick: T, smoke: T) -> T {
        switch self {
        case .full: full
        case .quick: quick
        case .smoke: smoke
        }
    }
}

/// Command-line options of `tandem-bench`: `--quick`, `--smoke`, `--only NAME[,NAME]`, `--help`.
struct BenchOptions {
    /// The figures that can be chosen with `--only`; ceilings they need always run with them.
    enum Figure: String, CaseIterable {
        case create, lookup, query, paging, console, sharing, sync, links, websocket, schema, mirror, highlights, sessions, uploads, accounts, pocketbase, migrate
        /// Three nodes on PostgreSQL with `--bus` to nats-server, beside one without: cross-node
        /// delivery, a session over three nodes, CPU per event (issue 20, decisions N42).
        case bus
        /// Creates, lookups and the query figure again with the server on PostgreSQL (a throwaway cluster).
        case postgres
    }

    static let usage = """
        usage: tandem-bench [--quick|--smoke] [--only create|lookup|query|paging|console|sharing|sync|links|websocket|schema|mirror|highlights|sessions|uploads|accounts|pocketbase|migrate|postgres|bus|ceilings[,...]]
          --quick   3 s load runs, 2 s SQLite loops and a 100,000-record query zone
          --smoke   every figure at tiny sizes, to prove each still runs (its figures mean nothing)
          --only    run only these figures (plus the ceilings they are measured against);
                    `ceilings` runs the ceilings alone; `postgres` runs creates, lookups and
                    the query figure with the server on a throwaway PostgreSQL cluster
        """

    var size = BenchSize.full
    var figures = Set(Figure.allCases)
    var help = false

    /// wrk's `-d` for every measured run, seconds.
    var loadSeconds: Int { size.pick(full: 10, quick: 3, smoke: 1) }
    /// A short unmeasured wrk run before each measured one (connections, caches, the default zone);
    /// none in a smoke run.
    var warmupSeconds: Int { size.pick(full: 2, quick: 1, smoke: 0) }
    /// Duration of each raw SQLite insert loop.
    var sqliteSeconds: Double { size.pick(full: 5, quick: 2, smoke: 0.5) }
    /// Records in the query benchmark's zone.
    var queryZoneRecords: Int { size.pick(full: 1_000_000, quick: 100_000, smoke: 5_000) }

    init(_ arguments: [String]) throws {
        var index = 0
        while index < arguments.count {
            switch arguments[index] {
            case "--quick", "--smoke":
                let chosen: BenchSize = arguments[index] == "--quick" ? .quick : .smoke
                guard size == .full || size == chosen else { throw BenchError("--quick and --smoke exclude each other\n\(Self.usage)") }
                size = chosen
            case "--help", "-h":
                help = true
            case "--only":
                guard index + 1 < arguments.count else { throw BenchError("--only needs a name\n\(Self.usage)") }
                index += 1
                figures = []
                for name in arguments[index].split(separator: ",", omittingEmptySubsequences: false).map(String.init) {
                    guard !name.isEmpty else { throw BenchError("--only needs names separated by commas, got '\(arguments[index])'\n\(Self.usage)") }
                    if name == "ceilings" { continue }
                    guard let figure = Figure(rawValue: name) else {
                        throw BenchError("unknown benchmark '\(name)'\n\(Self.usage)")
                    }
                    figures.insert(figure)
                }
            default:
                throw BenchError("unknown option '\(arguments[index])'\n\(Self.usage)")
            }
            index += 1
        }
    }
}
