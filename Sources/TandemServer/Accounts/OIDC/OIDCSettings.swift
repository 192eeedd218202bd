import Foundation

/// OpenID Connect settings of `tandem serve`, per container (issue 16; decisions A18–A23).
public struct OIDCSettings: Sendable {
    /// A trusted issuer whose ID tokens an app backend may exchange for a Tandem user token
    /// (`--oidc-exchange CONTAINER,ISSUER,AUDIENCE`; Supabase's "third-party auth").
    public struct Exchange: Sendable, Equatable {
        public var container: String
        /// The `iss` the tokens carry, exactly (e.g. `https://accounts.example.com`).
        public var issuer: String
        /// The `aud` the tokens must carry: the client ID the app's backend uses at that issuer.
        public var audience: String
    }

    /// A provider offered on the sign-in page ("Sign in with NAME"; authorization code + PKCE)
    /// (`--oidc-provider CONTAINER,NAME,ISSUER,CLIENT_ID[,CLIENT_SECRET]`).
    public struct Provider: Sendable, Equatable {
        public var container: String
        /// Shown on the button and used in the sign-in URL; unique per container.
        public var name: String
        public var issuer: String
        public var clientID: String
        /// Nil for a public client (PKCE alone).
        public var clientSecret: String?
    }

    public var exchanges: [Exchange] = []
    public var providers: [Provider] = []

    public init() {}

    /// Reads `CONTAINER,ISSUER,AUDIENCE`; the reason it is wrong otherwise.
    public static func exchange(_ text: String) -> Result<Exchange, OIDCSettingError> {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmingCharacters(in: .whitespaces) }
        guard parts.count == 3, !parts[0].isEmpty, !parts[2].isEmpty else {
            return .failure(OIDCSettingError(description: "--oidc-exchange takes CONTAINER,ISSUER,AUDIENCE, not '\(text)'"))
        }
        if let problem = issuerProblem(parts[1]) { return .failure(OIDCSettingError(description: "--oidc-exchange: \(problem)")) }
        return .success(Exchange(container: parts[0], issuer: parts[1], audience: parts[2]))
    }

    /// Reads `CONTAINER,NAME,ISSUER,CLIENT_ID[,CLIENT_SECRET]`; the reason it is wrong otherwise.
    public static func provider(_ text: String) -> Result<Provider, OIDCSettingError> {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmingCharacters(in: .whitespaces) }
        guard parts.count == 4 || parts.count == 5, !parts[0].isEmpty, !parts[1].isEmpty, !parts[3].isEmpty, parts.count == 4 || !parts[4].isEmpty else {
            return .failure(OIDCSettingError(description: "--oidc-provider takes CONTAINER,NAME,ISSUER,CLIENT_ID[,CLIENT_SECRET], not '\(text)'"))
        }
        guard parts[1].count <= 40, parts[1].unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) else {
            return .failure(OIDCSettingError(description: "--oidc-provider: NAME is at most 40 printable characters"))
        }
        if let problem = issuerProblem(parts[2]) { return .failure(OIDCSettingError(description: "--oidc-provider: \(problem)")) }
        return .success(Provider(container: parts[0], name: parts[1], issuer: parts[2], clientID: parts[3],
                                 clientSecret: parts.count == 5 ? parts[4] : nil))
    }

    /// Why `issuer` is not an issuer identifier (OpenID Connect Discovery §3: an `https` URL
    /// without query or fragment; `http` is accepted for the loopback addresses tests open).
    static func issuerProblem(_ issuer: String) -> String? {
        guard issuer.hasPrefix("https://") || issuer.hasPrefix("http://"), !issuer.contains("?"), !issuer.contains("#"),
              issuer.count > 8, !issuer.contains(where: \.isWhitespace) else {
            return "ISSUER must be the provider's issuer URL (https://..., no query or fragment), not '\(issuer)'"
        }
        return nil
    }

    /// The providers offered on `container`'s sign-in page.
    func providers(container: String) -> [Provider] { providers.filter { $0.container == container } }
}

/// Why an OIDC flag's value is wrong.
public struct OIDCSettingError: Error, CustomStringConvertible {
    public var description: String
}
