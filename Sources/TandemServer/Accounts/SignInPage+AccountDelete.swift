import TandemCore
import TandemHTTP
import TandemStore

/// The account deletion page (`/signin/account/delete?ckAPIToken=…`, decisions A15): a form for
/// the email and current password with a confirmation box, CSRF-checked like every sign-in form
/// (A9) and under the same content security policy. The password is checked with the sign-in
/// rate limits; the answer lists what was deleted.
extension SignInPage {
    static let deletePath = "/signin/account/delete"

    func showDeleteForm(_ context: RequestContext) throws -> HTTPResponse {
        let app: SignInApp
        switch try self.app(context.parameters) {
        case .failure(let problem): return page(SignInHTML.problem(problem.message), status: problem.status, origins: [])
        case .success(let found): app = found
        }
        let (cookie, setCookie) = csrfCookie(context)
        var response = page(SignInHTML.deleteForm(app: app, csrf: csrfToken(cookie)), status: 200, origins: app.origins)
        if let setCookie { response.headers.append(("set-cookie", setCookie)) }
        return response
    }

    func submitDelete(_ context: RequestContext) throws -> HTTPResponse {
        let fields = FormBody.parse(context.request.body)
        guard let (app, csrf) = try checkForm(context, fields) else { return forbidden() }
        func again(_ message: String, status: Int) -> HTTPResponse {
            page(SignInHTML.deleteForm(app: app, csrf: csrf, email: fields["email"] ?? "", error: message), status: status, origins: app.origins)
        }
        guard fields["confirm"] == "yes" else { return again("Tick the box to confirm that the account and its data go for good.", status: 400) }
        let accounts = services.accounts
        let now = Clock.milliseconds()
        let email: String
        do { email = try EmailAddress.normalize(fields["email"] ?? "") } catch { return again("Enter your email address and password.", status: 400) }
        // An unknown email is answered as a wrong password, after the same work (A4).
        let profile = try services.store.read { reader in
            try reader.user(recordNameOrEmail: email).flatMap { try reader.profile(user: $0.recordName) }
        } ?? AccountProfile(recordName: "", email: email, emailVerified: false, displayName: nil, createdAt: 0)
        do {
            try accounts.confirmPassword(fields["password"] ?? "", profile: profile, address: context.request.head.remoteAddress, at: now)
            let report = try services.deletion.delete(user: profile.recordName)
            services.authenticator.revoked()
            return page(SignInHTML.deleted(report), status: 200, origins: app.origins)
        } catch let error as CloudKitError {
            switch error.code {
            case .throttled:
                var response = again("Too many attempts. Try again in \(error.retryAfter ?? 60) seconds.", status: 429)
                response.headers.append(("retry-after", String(error.retryAfter ?? 60)))
                return response
            case .badRequest: return again("Enter your email address and password.", status: 400)
            default: return again("The email or password is wrong.", status: 401)
            }
        }
    }
}

extension SignInHTML {
    static func deleteForm(app: SignInApp, csrf: String, email: String = "", error: String? = nil) -> String {
        page(title: "Delete your account", body: """
            \(Self.error(error))
            <p>This deletes your account and, in every app on this server (\(escape(app.name)) among them), your private data,
            the shares you own and your place in other people's shares. It cannot be undone.</p>
            <form method="post" action="/signin/account/delete" id="delete">
            \(hidden("csrf", csrf))\(app.field)
            <label>Email <input type="email" name="email" id="email" autocomplete="username" required value="\(escape(email))"></label>
            <label>Current password <input type="password" name="password" id="password" autocomplete="current-password" required></label>
            <label><input type="checkbox" name="confirm" id="confirm" value="yes" required> Delete my account and its data for good</label>
            <button type="submit" id="submit">Delete account</button>
            </form>
            """)
    }

    static func deleted(_ report: AccountDeletion.Report) -> String {
        page(title: "Account deleted", body: """
            <p id="status">Your account was deleted.</p>
            <ul id="report">
            <li>Zones deleted: <span id="zones">\(report.zones)</span></li>
            <li>Records deleted: <span id="records">\(report.records)</span></li>
            <li>Shares stopped: <span id="shares">\(report.sharesStopped)</span></li>
            <li>Shares left: <span id="participations">\(report.participationsEnded)</span></li>
            <li>Sessions signed out: <span id="sessions">\(report.sessionsRevoked)</span></li>
            <li>Server-to-server keys revoked: <span id="server-keys">\(report.serverKeysRevoked)</span></li>
            </ul>
            """)
    }
}
