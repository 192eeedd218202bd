import TandemCore
import TandemHTTP
import TandemStore

/// The passkey steps of the sign-in page (decisions A27–A29). Every step is a POST carrying the
/// page's CSRF field (A9); a challenge is bound to the browser session by that field (`page:`
/// + the CSRF token, itself the MAC of the session's cookie), so an answer made in another
/// browser cannot be completed here.
///
/// - `POST /signin/passkey/options` (`purpose=get`, or `purpose=create` with `email`, `name`) →
///   JSON options for `navigator.credentials.get`/`create`, or a CloudKit error body.
/// - `POST /signin/passkey` (the assertion, base64url fields) → as `POST /signin`: the consent
///   page on a first sign-in, then the completion page or the callback redirect.
/// - `POST /signin/passkey/signup` (the registration) → "check your email", the same for a known
///   email (A28).
extension SignInPage {
    func respondPasskey(_ context: RequestContext) throws -> HTTPResponse {
        let fields = FormBody.parse(context.request.body)
        guard let (app, csrf) = try checkForm(context, fields) else {
            if context.request.head.path == "/signin/passkey/options" {
                throw CloudKitError(.accessDenied, "this page expired or did not come from this site; reload it and try again")
            }
            return forbidden()
        }
        let binding = "page:" + csrf
        let container = app.container
        let address = context.request.head.remoteAddress
        let accounts = services.accounts
        switch context.request.head.path {
        case "/signin/passkey/options":
            let now = Clock.milliseconds()
            switch fields["purpose"] {
            case "get":
                return Responses.json(.object(try accounts.passkey.challenge(binding: binding, container: container, baseURL: context.baseURL,
                                                                             address: address, at: now)))
            case "create":
                return Responses.json(.object(try accounts.passkeySignUpOptions(email: fields["email"] ?? "", displayName: fields["name"],
                                                                                binding: binding, container: container,
                                                                                baseURL: context.baseURL, address: address)))
            default:
                throw CloudKitError.badRequest("'purpose' is 'get' or 'create'")
            }
        case "/signin/passkey/signup":
            do {
                try accounts.signUpWithPasskey(fields, binding: binding, container: container, address: address,
                                               linkBase: context.mailLinkBaseURL.map { $0 + "/signin/verify?" + app.query })
                return page(SignInHTML.checkEmail(app: app), status: 200, origins: app.origins)
            } catch let error as CloudKitError where [.badRequest, .authenticationFailed, .throttled].contains(error.code) {
                let status = error.code == .badRequest ? 400 : error.code == .throttled ? 429 : 403
                return page(SignInHTML.signUpForm(app: app, csrf: csrf, error: "The passkey was not accepted: " + error.reason),
                            status: status, origins: app.origins)
            }
        default:
            var credential = fields
            credential["binding"] = binding
            credential["container"] = container
            do {
                return try signIn(with: accounts.passkey, credential: credential, app: app, csrf: csrf, context)
            } catch let error as CloudKitError where [.badRequest, .authenticationFailed, .throttled].contains(error.code) {
                let status = error.code == .badRequest ? 400 : error.code == .throttled ? 429 : 401
                var response = page(SignInHTML.signInForm(app: app, csrf: csrf, error: "Passkey sign-in failed: " + error.reason,
                                                          providers: providerNames(app)),
                                    status: status, origins: app.origins)
                if let retry = error.retryAfter { response.headers.append(("retry-after", String(retry))) }
                return response
            }
        }
    }
}
