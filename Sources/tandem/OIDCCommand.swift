import TandemServer

/// The OpenID Connect flags of `tandem serve` (issue 16; decisions A18–A23).
enum OIDCCommand {
    static let serveUsage = """
                       [--oidc-exchange CONTAINER,ISSUER,AUDIENCE]...   (app backends may trade ISSUER's ID tokens for AUDIENCE
                                  for a user token: POST /auth/1/CONTAINER/token/exchange {"idToken": JWT} with the API token)
                       [--oidc-provider CONTAINER,NAME,ISSUER,CLIENT_ID[,CLIENT_SECRET]]...   ("Sign in with NAME" on CONTAINER's
                                  sign-in page: authorization code + PKCE; register SERVER/signin/oidc/callback as its redirect URI)
                                  (issuers are fetched under the --webhook-allow rule: https to public addresses unless opened)
        """

    /// Applies every `--oidc-exchange` and `--oidc-provider`.
    static func configure(_ settings: inout OIDCSettings, _ options: Options) throws {
        for text in options.all("oidc-exchange") {
            switch OIDCSettings.exchange(text) {
            case .success(let exchange): settings.exchanges.append(exchange)
            case .failure(let error): throw UsageError(error.description)
            }
        }
        for text in options.all("oidc-provider") {
            switch OIDCSettings.provider(text) {
            case .success(let provider):
                guard !settings.providers.contains(where: { $0.container == provider.container && $0.name == provider.name }) else {
                    throw UsageError("--oidc-provider: two providers named '\(provider.name)' for container \(provider.container)")
                }
                settings.providers.append(provider)
            case .failure(let error): throw UsageError(error.description)
            }
        }
    }
}
