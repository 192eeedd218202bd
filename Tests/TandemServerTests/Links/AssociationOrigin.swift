import Foundation
import TandemTestSupport

/// A local stand-in for domains' web servers: a Python `http.server` answering
/// `GET /DOMAIN/.well-known/apple-app-site-association` as the test last said, and counting
/// requests per domain. The server under test reaches it through `--links-fetch-origin`.
final class AssociationOrigin: @unchecked Sendable {
    let directory: String
    private let process: Process
    /// Held open for the origin's lifetime; closing it (the test process ending) stops the origin.
    private let lifeline = Pipe()
    let origin: String

    /// How a domain answers: status, content type, body, and a `Location` for redirects.
    struct Answer {
        var status = 200
        var type = "application/json"
        var body: String
        var location: String?
    }

    private static let script = #"""
        import http.server, json, os, sys, threading
        root = sys.argv[1]
        # Exit when the test process goes away (its end of standard input closes).
        threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                domain = self.path.split('/')[1]
                path = os.path.join(root, domain + '.json')
                hits = os.path.join(root, domain + '.hits')
                count = int(open(hits).read()) if os.path.exists(hits) else 0
                open(hits, 'w').write(str(count + 1))
                if not os.path.exists(path):
                    self.send_response(404); self.send_header('Content-Length', '0'); self.end_headers(); return
                answer = json.load(open(path))
                body = answer['body'].encode()
                self.send_response(answer['status'])
                self.send_header('Content-Type', answer['type'])
                if answer.get('location'): self.send_header('Location', answer['location'])
                self.send_header('Content-Length', str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            def log_message(self, *args): pass
        server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """#

    init() throws {
        directory = NSTemporaryDirectory() + "aasa-origin-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let scriptPath = directory + "/origin.py"
        try Data(Self.script.utf8).write(to: URL(fileURLWithPath: scriptPath))
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", scriptPath, directory]
        let out = Pipe()
        process.standardOutput = out
        process.standardInput = lifeline
        // Not the test's own standard error: a child holding it open would keep the test
        // runner waiting after the tests finished.
        process.standardError = FileHandle.nullDevice
        try process.run()
        ExitCleanup.terminateAtExit(process)
        ExitCleanup.removeAtExit(directory)
        var line = ""
        while !line.hasSuffix("\n") {
            let chunk = out.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw TestFailure("the Python origin server did not start") }
            line += String(decoding: chunk, as: UTF8.self)
        }
        origin = "http://127.0.0.1:" + line.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// From now on `domain` answers with `answer`.
    func serve(_ domain: String, _ answer: Answer) throws {
        var object: [String: Any] = ["status": answer.status, "type": answer.type, "body": answer.body]
        if let location = answer.location { object["location"] = location }
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: "\(directory)/\(domain).json"))
    }

    /// Requests `domain` has received.
    func hits(_ domain: String) -> Int {
        (try? String(contentsOfFile: "\(directory)/\(domain).hits", encoding: .utf8)).flatMap { Int($0) } ?? 0
    }

    deinit {
        process.terminate()
        process.waitForTermination()
    }
}
