import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Tandem
import TandemTestSupport

/// The accounts JSON API (`/auth/1/{container}/...`) of a test server, for SDK tests that need
/// web auth tokens from a real sign-in rather than CLI-made tokens.
extension TestServer {
    /// A cheap Argon2id cost (64 KiB, 1 pass) for servers whose tests sign in.
    static let cheapHash = ["--password-hash", "m=64,t=1,p=1"]

    /// An API token (`ckAPIToken`) of the test container.
    func apiToken() throws -> String {
        try TandemProcess.admin(["token", "create", "--api", "--container", Self.container, "--data", dataDirectory])
    }

    /// POSTs `body` to an accounts operation; returns the status and the JSON object answered.
    func auth(_ operation: String, _ body: [String: Any], apiToken: String? = nil, bearer: String? = nil) async throws
        -> (status: Int, json: [String: Any]) {
        var components = URLComponents(url: serverURL.appendingPathComponent("auth/1/\(Self.container)/\(operation)"), resolvingAgainstBaseURL: false)!
        if let apiToken { components.queryItems = [URLQueryItem(name: "ckAPIToken", value: apiToken)] }
        var request = URLRequest(url: components.url!)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
        request.httpBody = try JSONSerialization.data(withJSONObject: body)
        let (data, response) = try await URLSession.shared.data(for: request)
        let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, json)
    }

    /// Signs `email` up, has the operator verify it, and returns a web auth token from signing in.
    func signUpAndSignIn(_ email: String, password: String, apiToken: String) async throws -> String {
        _ = try await auth("signup", ["email": email, "password": password], apiToken: apiToken)
        try TandemProcess.admin(["user", "verify", email, "--data", dataDirectory])
        return try await signIn(email, password: password, apiToken: apiToken)
    }

    func signIn(_ email: String, password: String, apiToken: String) async throws -> String {
        let answer = try await auth("signin", ["email": email, "password": password, "consent": true], apiToken: apiToken)
        guard let token = answer.json["ckWebAuthToken"] as? String else { throw TestFailure("signin: \(answer)") }
        return token
    }

    /// A container signed in the way CloudKit JS is: API token plus web auth token.
    func container(apiToken: String, webAuthToken: String, credentialsChanged: (@Sendable (Credentials) -> Void)? = nil) -> Container {
        Container(identifier: Self.container, environment: .development, serverURL: serverURL,
                  credentials: .apiToken(apiToken, webAuthToken: webAuthToken),
                  configuration: Container.Configuration(retryPolicy: RetryPolicy(maximumAttempts: 2, initialDelay: 0.1),
                                                         credentialsChanged: credentialsChanged))
    }
}
