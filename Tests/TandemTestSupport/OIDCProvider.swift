public import Foundation

/// A real OpenID Connect provider on loopback: Tests/OIDC/oidc_provider.py (oidc-provider-mock,
/// over authlib) running under .build/oidc-venv (`scripts/bootstrap --test`). Its issuer is
/// `http://127.0.0.1:PORT`; the server under test reaches it with `--webhook-allow 127.0.0.0/8`.
/// Shared by TandemServerTests (the exchange endpoint and the sign-in page) and the SDK's
/// TandemTests (`Container.signIn(exchanging:)`).
public final class OIDCProvider: @unchecked Sendable {
    let process = Process()
    private let input = Pipe()
    public let port: Int
    public var issuer: String { "http://127.0.0.1:\(port)" }

    static var python: String { TandemProcess.root.appendingPathComponent(".build/oidc-venv/bin/python").path }
    static var script: String { TandemProcess.root.appendingPathComponent("Tests/OIDC/oidc_provider.py").path }

    public init() throws {
        guard FileManager.default.isExecutableFile(atPath: Self.python) else {
            throw TandemProcessError("no \(Self.python): run scripts/bootstrap --test (installs oidc-provider-mock)")
        }
        process.executableURL = URL(fileURLWithPath: Self.python)
        process.arguments = [Self.script, "serve"]
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = input
        try process.run()
        ExitCleanup.terminateAtExit(process)
        var line = Data()
        while let byte = try output.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data("\n".utf8) { line += byte }
        guard let port = Int(String(decoding: line, as: UTF8.self)) else { throw TandemProcessError("the OIDC provider did not start") }
        self.port = port
    }

    deinit {
        try? input.fileHandleForWriting.close()
        process.waitForTermination()
    }

    /// An ID token the provider signs for `sub` and audience `clientID`, after setting the
    /// user's claims (`aud`, `iss`, `exp` there override the token's own).
    public func mint(sub: String, clientID: String, claims: [String: Any]? = nil, nonce: String? = nil) throws -> String {
        var arguments = ["mint", "--issuer", issuer, "--client-id", clientID, "--sub", sub]
        if let claims { arguments += ["--claims", String(decoding: try JSONSerialization.data(withJSONObject: claims), as: UTF8.self)] }
        if let nonce { arguments += ["--nonce", nonce] }
        return try Self.run(arguments)
    }

    /// `token`'s claims signed by a key the provider's JWK Set does not hold (`kid: not-in-jwks`).
    public func resignWithUnknownKey(_ token: String) throws -> String { try Self.run(["resign", "--token", token]) }

    static func run(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script] + arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        ExitCleanup.terminateAtExit(process)
        // Both are small (a token, or a traceback).
        let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let errors = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let processEnd = process.waitForTermination()
        guard processEnd.status == 0 else { throw TandemProcessError("oidc_provider.py \(arguments.first ?? ""): \(errors)") }
        return output.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
