extension SignInHTML {
    /// "Sign in with NAME" links, one per OpenID Connect provider of the app's container; each
    /// starts the provider's flow (`/signin/oidc/start`). Empty without providers.
    static func providerLinks(_ providers: [String], app: SignInApp) -> String {
        guard !providers.isEmpty, let apiToken = app.apiToken else { return "" }
        let links = providers.enumerated().map { index, name in
            "<a class=\"provider\" id=\"oidc-\(index)\" href=\"/signin/oidc/start?ckAPIToken=\(escape(percent(apiToken)))&amp;provider=\(escape(percent(name)))\">Sign in with \(escape(name))</a>"
        }
        return "<p class=\"providers\">" + links.joined(separator: " ") + "</p>"
    }
}
