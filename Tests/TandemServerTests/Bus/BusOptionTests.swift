import Foundation
import Testing
import TandemCore
import TandemPostgres
import TandemTestSupport

/// `tandem serve --bus` (decisions N9): what is refused before anything starts, and how a bus
/// that cannot be reached at start is reported.
@Suite("tandem serve --bus")
struct BusOptionTests {
    static let refused: [(label: String, arguments: [String], message: String)] = [
        ("another scheme", ["--bus", "redis://127.0.0.1:6379"], #"--bus takes nats://HOST:PORT URLs, comma-separated ("redis://127.0.0.1:6379" is not one)"#),
        ("one bad URL of two", ["--bus", "nats://127.0.0.1:4222,127.0.0.1:4223"], #"("127.0.0.1:4223" is not one)"#),
        ("a scheme alone", ["--bus", "nats://"], "--bus takes nats://HOST:PORT URLs"),
        ("nothing", ["--bus", " , "], "--bus takes nats://HOST:PORT URLs"),
        ("a port out of range", ["--bus", "nats://127.0.0.1:99999"], #"--bus: "nats://127.0.0.1:99999" has no valid port (1-65535)"#),
        ("a CA without a bus", ["--bus-ca", "/etc/ssl/certs/ca-certificates.crt"], "--bus-ca secures the bus: it needs --bus nats://HOST:PORT"),
        ("credentials without a bus", ["--bus-credentials", "/tmp/x.creds"], "--bus-credentials secures the bus: it needs --bus"),
        ("two --bus options", ["--bus", "nats://127.0.0.1:4222", "--bus", "nats://127.0.0.1:4223"],
         "--bus is given 2 times; give it once (several NATS servers go in one --bus, comma-separated"),
        ("another setting twice", ["--port", "1"], "--port is given 2 times; give it once"),
    ]

    @Test(arguments: refused.map(\.label))
    func aMalformedBusIsAUsageError(label: String) throws {
        let row = Self.refused.first { $0.label == label }!
        let directory = try ExitCleanup.temporaryDirectory("tandem-bus-option")
        let result = try runTandem(["serve", "--port", "0", "--data", directory, "--stop-on-stdin-eof"] + row.arguments)
        #expect(result.status == 64, "\(label): \(result.error.prefix(300))")
        #expect(result.error.hasPrefix(row.message) || result.error.contains(row.message), "\(label): \(result.error.prefix(300))")
    }

    @Test func theConfigFileTakesTheBusAndNamesTheKeyOfABadOne() throws {
        let directory = try ExitCleanup.temporaryDirectory("tandem-bus-option")
        let path = directory + "/tandem.json"
        try #"{"bus": "http://127.0.0.1:4222"}"#.write(toFile: path, atomically: true, encoding: .utf8)
        let result = try runTandem(["serve", "--config", path, "--port", "0", "--data", directory, "--stop-on-stdin-eof"])
        #expect(result.status == 64, "\(result.error.prefix(300))")
        #expect(result.error.hasPrefix(#"--config \#(path): "bus": --bus takes nats://"#), "\(result.error.prefix(300))")
    }

    @Test func anUnreachableBusStopsTheServerInOneLine() throws {
        let directory = try ExitCleanup.temporaryDirectory("tandem-bus-option")
        let port = try PostgresCluster.freePort()
        let result = try runTandem(["serve", "--port", "0", "--data", directory, "--stop-on-stdin-eof", "--bus", "nats://127.0.0.1:\(port)"])
        #expect(result.status == 1, "\(result.error)")
        let lines = result.error.split(separator: "\n").filter { !$0.contains("tandem stopped") }
        #expect(lines.count == 1 && lines[0].hasPrefix("error: the bus cannot be reached: NATS connect to nats://127.0.0.1:\(port)"),
                "\(result.error)")
    }

    /// A node alone on its bus waits 1.5 s to hear the others before it binds its port (N84). A
    /// SIGTERM meanwhile stops it there: it neither binds nor says it serves (stop 44's review
    /// saw it bind, say "serving on", then stop).
    @Test func aSignalWhileWaitingForTheOtherNodesStopsItBeforeItServes() throws {
        let nats = try NATSServer()
        let directory = try ExitCleanup.temporaryDirectory("tandem-bus-option")
        let result = try runTandem(["serve", "--port", "0", "--data", directory, "--stop-on-stdin-eof", "--bus", nats.url], timeout: 0.8)
        #expect(!result.error.contains("serving on"), "\(result.error)")
        #expect(result.status == 0, "\(result.status) \(result.error)")
    }

    @Test func aBusFromTheConfigFileIsUsed() throws {
        let nats = try NATSServer()
        let directory = try ExitCleanup.temporaryDirectory("tandem-bus-option")
        let path = directory + "/tandem.json"
        try "{\"bus\": \"\(nats.url)\"}".write(toFile: path, atomically: true, encoding: .utf8)
        let server = try TestServer(extraArguments: ["--config", path], dataDirectory: directory)
        defer { server.stop() }
        #expect(server.standardError?.value.contains("bus: \(nats.url)") == true, "\(server.standardError?.value ?? "")")
    }

    /// A scheme in capitals is a scheme, as for `--store` (N61; libnats reads only lower case).
    @Test func aSchemeInCapitalsIsAccepted() throws {
        let nats = try NATSServer()
        let directory = try ExitCleanup.temporaryDirectory("tandem-bus-option")
        let server = try TestServer(extraArguments: ["--bus", "NATS://127.0.0.1:\(nats.port)"], dataDirectory: directory)
        defer { server.stop() }
        #expect(server.standardError?.value.contains("bus: nats://127.0.0.1:\(nats.port)") == true, "\(server.standardError?.value ?? "")")
    }

    @Test func theUsageNamesTheBus() throws {
        let result = try runTandem(["serve", "--help"])
        #expect(result.status == 0 && result.output.contains("[--bus nats://HOST:4222"), "\(result.output.prefix(300))")
    }

    /// The bus's password is never shown (N29), as the store's is not: not on the start line,
    /// not in a connect error, not in a usage error; a token alone is hidden whole.
    @Test func theBusPasswordIsNotShown() throws {
        let port = try PostgresCluster.freePort()
        let directory = try ExitCleanup.temporaryDirectory("tandem-bus-option")
        let unreachable = try runTandem(["serve", "--port", "0", "--data", directory, "--stop-on-stdin-eof",
                                         "--bus", "nats://tandem:s3cret@127.0.0.1:\(port)"])
        #expect(unreachable.status == 1 && unreachable.error.contains("NATS connect to nats://tandem@127.0.0.1:\(port)")
                && !unreachable.error.contains("s3cret"), "\(unreachable.error)")
        let malformed = try runTandem(["serve", "--port", "0", "--data", directory, "--bus", "nats://127.0.0.1:1,http://u:s3cret@h"])
        #expect(malformed.status == 64 && malformed.error.contains("http://u@h") && !malformed.error.contains("s3cret"), "\(malformed.error)")

        let nats = try NATSServer(arguments: ["--user", "tandem", "--pass", "s3cret"])
        let server = try TestServer(extraArguments: ["--bus", "nats://tandem:s3cret@127.0.0.1:\(nats.port)"])
        defer { server.stop() }
        let log = server.standardError?.value ?? ""
        #expect(log.contains("bus: nats://tandem@127.0.0.1:\(nats.port)") && !log.contains("s3cret"), "\(log)")
    }

    @Test func connectionURLsAreRedactedByOneRule() {
        #expect(RedactedURL.userPart("nats://tandem:s3cret@h:4222") == "nats://tandem@h:4222")
        #expect(RedactedURL.userPart("tls://t0ken@h:4222", aloneIsSecret: true) == "tls://REDACTED@h:4222")
        #expect(RedactedURL.userPart("nats://h:4222/x@y") == "nats://h:4222/x@y")
        // libnats reads a password with `/`, `?`, `#` or `@` unescaped: all of it is hidden (N61).
        for password in ["ab/cd+ef", "x@y?z#w", "p/q@r"] {
            let shown = RedactedURL.userPart("nats://tandem:\(password)@127.0.0.1:4222", aloneIsSecret: true, untilLastAt: true)
            #expect(shown == "nats://tandem@127.0.0.1:4222", "\(password): \(shown)")
        }
        #expect(RedactedURL.userPart("nats://u:p@ss@h:4222") == "nats://u@h:4222")
        #expect(PostgresURL.redacted("postgres://tandem:pw@db:5433/tandem?password=pw&sslmode=require")
                == "postgres://tandem@db:5433/tandem?sslmode=require")
        #expect(PostgresURL.redacted("POSTGRES://tandem@db/tandem") == "postgres://tandem@db/tandem")
    }
}
