import Foundation
import TandemCore
import TandemServer
import TandemStore

/// `tandem` subcommands. Every command takes `--data DIR` (default ./tandem-data).
extension CommandLine {
    static let usage = """
        usage:
          tandem serve [--host 127.0.0.1] [--port 8080] [--data DIR] [--synchronous full|normal] [--workers N] [--quiet]
                       [--stop-on-stdin-eof]   (for supervisors and tests: stop cleanly when standard input closes)
          tandem container create ID [--data DIR]
          tandem user add --email EMAIL [--name "Given Family"] [--data DIR]
          tandem token create --user EMAIL_OR_USER_RECORD_NAME [--data DIR]
          tandem token create --api --container ID [--data DIR]
        """

    /// Runs a command line; returns the process exit status.
    static func run(_ arguments: [String]) -> Int32 {
        var options: Options
        do {
            options = try Options(arguments)
        } catch {
            fail("\(error)\n\(usage)")
            return 64
        }
        let data = options.value("data") ?? "./tandem-data"
        do {
            switch (options.words.first, options.words.dropFirst().first, options.words.count) {
            case ("serve", nil, 1):
                var configuration = ServerConfiguration(dataDirectory: data)
                configuration.host = options.value("host") ?? configuration.host
                if let port = options.value("port") {
                    guard let n = Int(port), (0...65535).contains(n) else { throw UsageError("--port must be 0–65535") }
                    configuration.port = n
                }
                if let sync = options.value("synchronous") {
                    guard let level = SQLiteSynchronous(rawValue: sync.uppercased()) else { throw UsageError("--synchronous must be full or normal") }
                    configuration.synchronous = level
                }
                if let workers = options.value("workers") {
                    guard let n = Int(workers), n > 0 else { throw UsageError("--workers must be a positive number") }
                    configuration.workerCount = n
                }
                configuration.logRequests = !options.flag("quiet")
                let server = try TandemServer(configuration: configuration)
                if options.flag("stop-on-stdin-eof") { StdinWatch.stopWhenStandardInputCloses(server) }
                try server.runUntilSignalled()
            case ("container", "create", 3):
                let id = options.words[2]
                let store = try SQLiteStore(directory: data)
                defer { store.close() }
                let created = try Admin.createContainer(id, store: store)
                print(created ? "created container \(id)" : "container \(id) already exists")
            case ("user", "add", 2):
                guard let email = options.value("email") else { throw UsageError("user add needs --email") }
                let store = try SQLiteStore(directory: data)
                defer { store.close() }
                let user = try Admin.addUser(email: email, name: options.value("name"), store: store)
                print(user.recordName)
            case ("token", "create", 2):
                let store = try SQLiteStore(directory: data)
                defer { store.close() }
                if options.flag("api") {
                    guard let container = options.value("container") else { throw UsageError("token create --api needs --container ID") }
                    print(try Admin.createAPIToken(container: container, store: store))
                } else {
                    guard let user = options.value("user") else { throw UsageError("token create needs --user EMAIL_OR_USER_RECORD_NAME") }
                    print(try Admin.createUserToken(for: user, store: store))
                }
            default:
                throw UsageError("unknown command '\(options.words.joined(separator: " "))'")
            }
            return 0
        } catch let error as UsageError {
            fail("\(error.message)\n\(usage)")
            return 64
        } catch let error as CloudKitError {
            fail("error: \(error.reason)")
            return 1
        } catch {
            fail("error: \(error)")
            return 1
        }
    }

    static func fail(_ message: String) {
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }
}

struct UsageError: Error, CustomStringConvertible {
    var message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}

/// Words and `--name value` / `--flag` options.
struct Options {
    static let flags: Set<String> = ["api", "quiet", "stop-on-stdin-eof"]
    var words: [String] = []
    var values: [String: String] = [:]

    init(_ arguments: [String]) throws {
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument.hasPrefix("--") {
                var name = String(argument.dropFirst(2))
                if let equals = name.firstIndex(of: "=") {
                    values[String(name[..<equals])] = String(name[name.index(after: equals)...])
                    name = ""
                } else if Self.flags.contains(name) {
                    values[name] = "true"
                } else {
                    guard index + 1 < arguments.count else { throw UsageError("--\(name) needs a value") }
                    values[name] = arguments[index + 1]
                    index += 1
                }
            } else {
                words.append(argument)
            }
            index += 1
        }
    }

    func value(_ name: String) -> String? { values[name] }
    func flag(_ name: String) -> Bool { values[name] != nil }
}
