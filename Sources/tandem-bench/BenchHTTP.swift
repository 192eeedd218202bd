import Foundation
import TandemCore
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// In-process HTTP requests for benchmarks that make many small requests in a row (curl
/// processes would dominate): one URLSession with keep-alive.
final class BenchHTTP: Sendable {
    private let session: URLSession

    init() {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 64
        configuration.timeoutIntervalForRequest = 30
        session = URLSession(configuration: configuration)
    }

    /// POSTs `body` and returns (status, body bytes).
    func post(_ url: String, token: String, body: [UInt8]) throws -> (status: Int, body: Data) {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = "POST"
        request.httpBody = Data(body)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        let done = DispatchSemaphore(value: 0)
        let result = Locked<(Int, Data, (any Error)?)>((0, Data(), nil))
        session.dataTask(with: request) { data, response, error in
            result.withLock { $0 = ((response as? HTTPURLResponse)?.statusCode ?? 0, data ?? Data(), error) }
            done.signal()
        }.resume()
        done.wait()
        let (status, data, error) = result.withLock { $0 }
        if let error { throw BenchError("POST \(url) failed: \(error)") }
        return (status, data)
    }
}
