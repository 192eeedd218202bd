import Foundation

/// The reference for the broadcast figure: a Python `websockets` server (from PyPI, in a venv
/// under `.build/bench-data/websockets-venv`) that sends every binary message to every other
/// connection, as a session fan-out does.
final class ReferenceBroadcastServer {
    static let script = """
        import asyncio, sys
        import websockets
        from websockets.asyncio.server import serve, broadcast
        clients = set()
        async def handler(ws):
            clients.add(ws)
            try:
                async for message in ws:
                    broadcast([c for c in clients if c is not ws], message)
            finally:
                clients.discard(ws)
        async def main():
            async with serve(handler, "127.0.0.1", 0, max_queue=None) as server:
                with open(sys.argv[1], "w") as f:
                    f.write(f"{server.sockets[0].getsockname()[1]} {websockets.__version__}\\n")
                await asyncio.Future()
        asyncio.run(main())
        """

    let process = Process()
    private(set) var port = 0
    private(set) var version = ""

    /// Creates the venv when missing, then starts the server.
    static func start() throws -> ReferenceBroadcastServer {
        let venv = BenchPaths.cacheRoot + "/websockets-venv"
        let python = venv + "/bin/python"
        if !FileManager.default.isExecutableFile(atPath: python) || !shell([python, "-c", "import websockets"]) {
            guard shell(["python3", "-m", "venv", venv]), shell([venv + "/bin/pip", "install", "-q", "websockets"]) else {
                throw BenchError("cannot set up the websockets venv")
            }
        }
        let server = ReferenceBroadcastServer()
        // The server writes "PORT VERSION" to a file once it listens.
        let portFile = NSTemporaryDirectory() + "tandem-bench-reference-\(getpid()).port"
        try? FileManager.default.removeItem(atPath: portFile)
        defer { try? FileManager.default.removeItem(atPath: portFile) }
        server.process.executableURL = URL(fileURLWithPath: python)
        server.process.arguments = ["-c", script, portFile]
        server.process.standardOutput = FileHandle.nullDevice
        server.process.standardError = FileHandle.nullDevice
        try server.process.run()
        var line = ""
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline && server.process.isRunning {
            line = (try? String(contentsOfFile: portFile, encoding: .utf8)) ?? ""
            if line.hasSuffix("\n") { break }
            usleep(50_000)
        }
        let parts = line.split(whereSeparator: \.isWhitespace)
        guard parts.count >= 2, let port = Int(parts[0]) else {
            server.stop()
            throw BenchError("the reference server did not start: \(line)")
        }
        server.port = port
        server.version = String(parts[1])
        return server
    }

    /// SIGKILL: a child started from a Dispatch thread inherits its blocked SIGTERM.
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    private static func shell(_ arguments: [String]) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
}
