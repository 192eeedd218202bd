/// Command-line options of `tandem-bench`: `--quick`, `--only NAME[,NAME]`, `--help`.
struct BenchOptions {
    /// The figures that can be chosen with `--only`; ceilings they need always run with them.
    enum Figure: String, CaseIterable {
        case create, lookup, query, sharing, sync, links, websocket, schema, mirror, highlights, sessions, uploads
    }

    static let usage = """
        usage: tandem-bench [--quick] [--only create|lookup|query|sharing|sync|links|websocket|schema|mirror|highlights|sessions|uploads|ceilings[,...]]
          --quick   3 s load runs, 2 s SQLite loops and a 100,000-record query zone (a smoke run)
          --only    run only these figures (plus the ceilings they are measured against);
                    `ceilings` runs the ceilings alone
        """

    var quick = false
    var figures = Set(Figure.allCases)
    var help = false

    /// wrk's `-d` for every measured run, seconds.
    var loadSeconds: Int { quick ? 3 : 10 }
    /// A short unmeasured wrk run before each measured one (connections, caches, the default zone).
    var warmupSeconds: Int { quick ? 1 : 2 }
    /// Duration of each raw SQLite insert loop.
    var sqliteSeconds: Double { quick ? 2 : 5 }
    /// Records in the query benchmark's zone.
    var queryZoneRecords: Int { quick ? 100_000 : 1_000_000 }

    init(_ arguments: [String]) throws {
        var index = 0
        while index < arguments.count {
            switch arguments[index] {
            case "--quick":
                quick = true
            case "--help", "-h":
                help = true
            case "--only":
                guard index + 1 < arguments.count else { throw BenchError("--only needs a name\n\(Self.usage)") }
                index += 1
                figures = []
                for name in arguments[index].split(separator: ",").map(String.init) {
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
