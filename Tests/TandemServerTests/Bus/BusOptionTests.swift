import Foundation
import Testing
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

    @Test func aBusFromTheConfigFileIsUsed() throws {
        let nats = try NATSServer()
        let directory = try ExitCleanup.temporaryDirectory("tandem-bus-option")
        let path = directory + "/tandem.json"
        try "{\"bus\": \"\(nats.url)\"}".write(toFile: path, atomically: true, encoding: .utf8)
        let server = try TestServer(extraArguments: ["--config", path], dataDirectory: directory)
        defer { server.stop() }
        #expect(server.standardError?.value.contains("bus: \(nats.url)") == true, "\(server.standardError?.value ?? "")")
    }

    @Test func theUsageNamesTheBus() throws {
        let result = try runTandem(["serve", "--help"])
        #expect(result.status == 0 && result.output.contains("[--bus nats://HOST:4222"), "\(result.output.prefix(300))")
    }
}
