import CSQLite
import Foundation
import TandemHTTP

/// What the figures were measured on, printed first so numbers from different machines are
/// never compared blindly.
enum Machine {
    static var summary: [String] {
        [
            "machine:   \(ProcessInfo.processInfo.activeProcessorCount) CPUs (nproc), \(cpuModel), "
                + "\(Format.bytes(Int(ProcessInfo.processInfo.physicalMemory))) RAM",
            "software:  SQLite \(String(cString: sqlite3_libversion())), libwebsockets \(HTTPServer.libwebsocketsVersion), "
                + "\(wrkVersion)",
            "load:      \(loadAverage) (1/5/15 min; other work on this machine skews the absolute figures, less the ratios)",
        ]
    }

    static var cpuModel: String {
        let text = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        for line in text.split(separator: "\n") where line.hasPrefix("model name") {
            if let colon = line.firstIndex(of: ":") {
                return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return "unknown CPU"
    }

    static var loadAverage: String {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    static var wrkVersion: String {
        guard let wrk = Wrk.executable, let output = try? Shell.run(wrk, ["-v"]) else { return "wrk missing" }
        let first = (output.stdout + output.stderr).split(separator: "\n").first.map(String.init) ?? "wrk"
        return first.split(separator: " ").prefix(2).joined(separator: " ")
    }
}
