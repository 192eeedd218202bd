import Foundation

/// Stops a server when its standard input reaches end of file: a supervisor (or a test) that
/// holds the other end of the pipe dies, and the server follows instead of lingering.
enum StdinWatch {
    /// Calls `stop` (on a thread of its own) once standard input reaches end of file.
    static func stopWhenStandardInputCloses(_ stop: @escaping @Sendable () -> Void) {
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 256)
            while true {
                let n = read(0, &buffer, buffer.count)
                if n == 0 || (n < 0 && errno != EINTR) { break }
            }
            stop()
        }
        thread.name = "tandem-stdin-watch"
        thread.start()
    }
}
