import Foundation
import TandemTestSupport

/// Runs the built `tandem` with `arguments` (and `--store` after `--data` under the test store
/// switch, `TestStore`); returns its exit status, standard output and
/// standard error. Its standard input is empty (a `serve --stop-on-stdin-eof` that should have
/// been refused stops at once instead of serving for ever). With `timeout` (seconds), a command
/// still running then gets SIGTERM, so a hang fails its test instead of the run.
func runTandem(_ arguments: [String], timeout: Double? = nil) throws -> (status: Int32, output: String, error: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: TestServer.binary)
    process.arguments = try TestStore.adding(arguments)
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    try process.run()
    // The pid, not the Process, crosses threads; the timer is cancelled once the process exited.
    let pid = process.processIdentifier
    let timer = DispatchWorkItem { kill(pid, SIGTERM) }
    if let timeout { DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: timer) }
    let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    let error = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    timer.cancel()
    return (process.waitForTermination().status, output, error)
}
