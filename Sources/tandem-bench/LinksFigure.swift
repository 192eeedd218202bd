import Foundation
import TandemLinks

/// Universal-link matching on one core: matches per second of a compiled file with 50
/// components and substitution variables (issue 7 target: over 1,000,000/s), and the time to
/// parse and compile the largest published fixture and a file at the 128 KiB limit.
/// Pure CPU work: no ceiling beside it.
enum LinksFigure {
    static let app = "ABCDE12345.com.example.app"

    static func run(options: BenchOptions, report: Report) throws {
        report.section("links")
        let file = fiftyComponents()
        let matcher = try LinkMatcher(bytes: file)
        // Hits early, late, blocked, and misses that run through all 50 components.
        let urls = [
            "https://example.com/en_US/shop3/item-42?ref=abc",
            "https://example.com/fr_CA/shop47/item-9?ref=x#top",
            "https://example.com/de_DE/shop25/private/key",
            "https://example.com/xx_ZZ/nothing/here",
            "https://example.com/about/team?lang=en",
        ].map(LinkURL.init)
        let seconds = options.size.pick(full: 3.0, quick: 1.0, smoke: 0.2)
        let perSecond = rate(seconds: seconds) { i in matcher.match(urls[i % urls.count], appID: app) != .noMatch }
        let stringURLs = urls.map { "https://example.com" + $0.path + ($0.query.isEmpty ? "" : "?" + $0.query) }
        let withParsing = rate(seconds: seconds) { i in matcher.match(stringURLs[i % urls.count], appID: app) != .noMatch }
        report.say("  50 components, $(lang) $(region) $(digit) and a custom variable, 5 URLs in turn, one thread")
        report.say("  matches per CPU second (wall-clock second), URL already split:    \(Format.rate(perSecond.cpu)) (\(Format.rate(perSecond.wall)))")
        report.say("  matches per CPU second (wall-clock second), URL string each time: \(Format.rate(withParsing.cpu)) (\(Format.rate(withParsing.wall)))")
        report.add("link matches per CPU s, 50 components, 1 core", value: Format.rate(withParsing.cpu), target: ">1,000,000/s",
                   verdict: Report.Verdict(passes: withParsing.cpu > 1_000_000))

        let (name, largest) = try largestFixture()
        let fixture = compileTime(largest)
        report.say("  parse + compile \(name) (\(Format.count(largest.count)) bytes): \(Format.latency(fixture))")
        report.add("link file compile, largest fixture (\(name))", value: Format.latency(fixture), verdict: .info)
        let limit = atTheLimit()
        let full = compileTime(limit)
        report.say("  parse + compile a \(Format.count(limit.count))-byte file (the 128 KiB limit): \(Format.latency(full))")
        report.add("link file compile, 128 KiB file", value: Format.latency(full), verdict: .info)
    }

    /// Calls `body` with 0, 1, 2, … for about `seconds` of this thread's CPU time; returns calls
    /// per CPU second (what one core does, whatever else the machine runs) and per wall second.
    private static func rate(seconds: Double, _ body: (Int) -> Bool) -> (cpu: Double, wall: Double) {
        let clock = ContinuousClock()
        let start = clock.now
        let cpuStart = ProcessCPU.currentThread
        var calls = 0
        var hits = 0
        while true {
            for _ in 0..<10_000 {
                if body(calls) { hits += 1 }
                calls += 1
            }
            let cpu = ProcessCPU.currentThread - cpuStart
            if cpu >= seconds {
                precondition(hits > 0, "the benchmark file matched nothing")
                let elapsed = clock.now - start
                let wall = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
                return (Double(calls) / cpu, Double(calls) / wall)
            }
        }
    }

    /// Median of several parse-and-compile runs, seconds.
    private static func compileTime(_ bytes: [UInt8]) -> Double {
        let clock = ContinuousClock()
        var times: [Double] = []
        for _ in 0..<21 {
            let start = clock.now
            _ = try? LinkMatcher(bytes: bytes)
            let elapsed = clock.now - start
            times.append(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18)
        }
        return times.sorted()[times.count / 2]
    }

    private static func fiftyComponents() -> [UInt8] {
        var components: [String] = []
        for i in 0..<24 {
            components.append(#"{"/": "/$(lang)_$(region)/shop\#(i)/private/*", "exclude": true}"#)
            components.append(#"{"/": "/$(lang)_$(region)/shop\#(i)/item-$(digit)*", "?": {"ref": "?*"}}"#)
        }
        components.append(#"{"/": "/$(section)/*", "caseSensitive": false}"#)
        components.append(##"{"/": "/$(lang)_$(region)/shop*/*", "#": "top"}"##)
        let text = #"""
            {"applinks": {"substitutionVariables": {"section": ["help", "support", "docs", "blog"]},
             "details": [{"appIDs": ["\#(app)"], "components": [\#(components.joined(separator: ",\n"))]}]}}
            """#
        return Array(text.utf8)
    }

    /// A file just under 128 KiB: many entries of path components.
    private static func atTheLimit() -> [UInt8] {
        var details: [String] = []
        var size = 0
        var i = 0
        while size < AssociationFile.maximumSize - 2_000 {
            let detail = ##"{"appIDs": ["ABCDE12345.com.example.app\##(i)"], "components": [{"/": "/a\##(i)/*"}, {"/": "/b\##(i)/$(digit)*", "?": {"q": "?*"}}, {"#": "no\##(i)", "exclude": true}]}"##
            details.append(detail)
            size += detail.utf8.count + 2
            i += 1
        }
        return Array(#"{"applinks": {"details": [\#(details.joined(separator: ",\n"))]}}"#.utf8)
    }

    /// The largest file of the test fixtures that parses (`Tests/TandemLinksTests/Fixtures/aasa`).
    private static func largestFixture() throws -> (String, [UInt8]) {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let folder = root.appendingPathComponent("Tests/TandemLinksTests/Fixtures/aasa")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        var best: (String, [UInt8])?
        for name in names {
            guard let data = FileManager.default.contents(atPath: folder.appendingPathComponent(name).path) else { continue }
            let bytes = Array(data)
            guard (try? AssociationFile.parse(bytes)) != nil, bytes.count > (best?.1.count ?? -1) else { continue }
            best = (name, bytes)
        }
        guard let best else { throw BenchError("no parseable fixture in \(folder.path)") }
        return best
    }
}
