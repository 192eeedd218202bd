public import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A throwaway load balancer in front of several `tandem serve` nodes (issue 20 item 5;
/// decisions N13): Debian's `nginx` (`scripts/bootstrap --test` installs it), run in the
/// foreground (`daemon off`) with a generated configuration in a temporary folder, listening on
/// 127.0.0.1 on a free port only, round-robin over the nodes, WebSocket upgrade passed through.
/// Its access log names the node each request went to (`upstream=127.0.0.1:PORT`), so a test can
/// prove requests were spread.
///
/// ```swift
/// let nginx = try NginxBalancer(upstreams: [a.port, b.port, c.port])
/// … "http://127.0.0.1:\(nginx.port)" …
/// ```
///
/// Stopped at process exit through ``ExitCleanup``, and by a ``Lifeline`` if the test process
/// crashes. docs/deployment.md shows the same configuration (``configuration(port:upstreams:folder:)``).
public final class NginxBalancer: Sendable {
    /// The TCP port on 127.0.0.1.
    public let port: Int
    /// The folder holding the configuration, logs and nginx's temporary files.
    public let directory: String
    private let process: Process
    private let lifeline: Lifeline

    /// `http://127.0.0.1:PORT`.
    public var url: String { "http://127.0.0.1:\(port)" }

    /// Starts nginx in front of `upstreams` (ports on 127.0.0.1) and waits until it accepts
    /// connections (30 s at most).
    /// - Throws: ``TandemProcessError`` when nginx is not installed or does not start.
    public init(upstreams: [Int]) throws {
        guard let binary = ["/usr/sbin/nginx", "/usr/bin/nginx"].first(where: FileManager.default.isExecutableFile) else {
            throw TandemProcessError("no nginx in /usr/sbin or /usr/bin: run scripts/bootstrap --test (installs nginx)")
        }
        directory = try ExitCleanup.temporaryDirectory("tandem-nginx")
        port = try PostgresCluster.freePort()
        let config = directory + "/nginx.conf"
        try Self.configuration(port: port, upstreams: upstreams, folder: directory).write(toFile: config, atomically: true, encoding: .utf8)
        process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        // -e: the error log before the configuration is read (the default path may not be writable).
        process.arguments = ["-p", directory, "-c", config, "-e", directory + "/error.log"]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // SIGTERM: nginx's fast shutdown (the master stops its workers).
        ExitCleanup.terminateAtExit(process)
        lifeline = try Lifeline(pid: process.processIdentifier, signal: "TERM", name: "nginx-lifeline")
        let deadline = Date(timeIntervalSinceNow: 30)
        while !NATSServer.accepts(port: port) {
            guard process.isRunning, Date() < deadline else {
                if process.isRunning { kill(process.processIdentifier, SIGKILL) }
                let log = (try? String(contentsOfFile: directory + "/error.log", encoding: .utf8)) ?? ""
                throw TandemProcessError("nginx did not start on port \(port): \(log.suffix(2000))")
            }
            usleep(20_000)
        }
    }

    /// The nodes requests went to so far (`127.0.0.1:PORT` of each logged request, in order).
    public var upstreamsUsed: [String] {
        let log = (try? String(contentsOfFile: directory + "/access.log", encoding: .utf8)) ?? ""
        return log.split(separator: "\n").compactMap { line in
            line.split(separator: " ").first { $0.hasPrefix("upstream=") }.map { String($0.dropFirst("upstream=".count)) }
        }
    }

    /// Stops nginx (SIGTERM) and waits until it exited.
    public func stop() {
        lifeline.retire()
        if process.isRunning { process.terminate() }
        process.waitForTermination()
    }

    /// The configuration: round-robin over `upstreams`, a dead node skipped for 10 s after one
    /// failed connect, a request that could not reach a node tried on the next (nginx does so
    /// for a POST only when nothing was sent yet), WebSocket upgrade, the client's Host passed
    /// on (the server builds its URLs from it when `--public-url` is not set), and timeouts
    /// longer than a long poll's or an idle stream's.
    public static func configuration(port: Int, upstreams: [Int], folder: String) -> String {
        let servers = upstreams.map { "        server 127.0.0.1:\($0) max_fails=0;" }.joined(separator: "\n")
        return """
        daemon off;
        master_process on;
        worker_processes 1;
        pid \(folder)/nginx.pid;
        error_log \(folder)/error.log warn;
        events { worker_connections 1024; }
        http {
            access_log off;
            client_body_temp_path \(folder)/body;
            proxy_temp_path \(folder)/proxy;
            fastcgi_temp_path \(folder)/fastcgi;
            uwsgi_temp_path \(folder)/uwsgi;
            scgi_temp_path \(folder)/scgi;
            log_format tandem '$request_method $uri $status upstream=$upstream_addr';
            # "upgrade" only when the client asked for it; a plain request's connection closes.
            map $http_upgrade $connection_upgrade { default upgrade; '' close; }
            upstream tandem {
        \(servers)
            }
            server {
                listen 127.0.0.1:\(port);
                access_log \(folder)/access.log tandem;
                client_max_body_size 0;
                location / {
                    proxy_pass http://tandem;
                    proxy_http_version 1.1;
                    proxy_set_header Upgrade $http_upgrade;
                    proxy_set_header Connection $connection_upgrade;
                    proxy_set_header Host $http_host;
                    proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
                    proxy_set_header X-Forwarded-Proto $scheme;
                    proxy_set_header X-Forwarded-Host $http_host;
                    proxy_next_upstream error timeout;
                    proxy_connect_timeout 2s;
                    proxy_read_timeout 3600s;
                    proxy_send_timeout 3600s;
                    proxy_request_buffering off;
                    proxy_buffering off;
                }
            }
        }

        """
    }
}
