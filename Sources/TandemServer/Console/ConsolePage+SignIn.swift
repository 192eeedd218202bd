import Foundation
import TandemCore
import TandemHTTP
import TandemStore

/// The first administrator (`/console/setup`, decisions C2) and the console's sign-in
/// (`/console/signin`, C9): forms under the console's CSRF check (C4), sessions issued by
/// `ConsoleSessions` (C3).
extension ConsolePage {
    /// The setup form; `error` is shown beside the input named `field` (`code`, `email`,
    /// `password`), or above the form when `field` is nil.
    func showSetup(_ context: RequestContext, code: String, email: String = "", error: String?, field: String? = nil,
                   status: Int) throws -> HTTPResponse {
        guard try !ConsoleAdmin.exists(store: services.store) else { return redirect("/console/signin") }
        let (cookie, setCookie) = csrf.cookie(context)
        let body: String
        if services.consoleSetup.isOpen {
            body = """
                <p id="setup-text">Create the first administrator. Enter the setup code <code>tandem serve</code> printed in its terminal, and the email and password the administrator signs in with.</p>
                \(ConsoleHTML.error(field == nil ? error : nil))
                \(ConsoleHTML.form(action: "/console/setup", csrf: csrf.token(cookie), id: "setup", fields: """
                    \(ConsoleHTML.field("Setup code", name: "code", value: code, required: true, autocomplete: "off", error: field == "code" ? error : nil))
                    \(ConsoleHTML.field("Email", name: "email", type: "email", value: email, required: true, autocomplete: "username",
                                        error: field == "email" ? error : nil))
                    \(ConsoleHTML.field("Password", name: "password", type: "password", required: true, autocomplete: "new-password",
                                        error: field == "password" ? error : nil, hint: "At least 8 characters."))
                    """, button: "Create administrator"))
                """
        } else {
            body = "<p id=\"setup-closed\">Restart <code>tandem serve</code> to print a new setup code, or run <code>tandem admin add EMAIL</code> on the server.</p>"
        }
        var response = page(ConsoleHTML.page(title: "Create the first admin", csrf: nil, body: body), status: status)
        if let setCookie { response.headers.append(("set-cookie", setCookie)) }
        return response
    }

    func submitSetup(_ context: RequestContext) throws -> HTTPResponse {
        let fields = FormBody.parse(context.request.body)
        guard csrf.check(context, fields) != nil else { return forbidden() }
        guard try !ConsoleAdmin.exists(store: services.store) else {
            return page(ConsoleHTML.page(title: "Setup is closed", csrf: nil, body: """
                <p id="setup-closed">An administrator exists already. <a href="/console/signin">Sign in</a>.</p>
                """), status: 403)
        }
        let code = fields["code"] ?? "", email = fields["email"] ?? ""
        guard services.consoleSetup.matches(code) else {
            return try showSetup(context, code: "", email: email, error: "The setup code is wrong or was used. Copy it from the terminal where tandem serve runs.",
                                 field: "code", status: 403)
        }
        let normalized: String
        do {
            normalized = try EmailAddress.normalize(email)
        } catch let error as CloudKitError {
            return try showSetup(context, code: code, email: email, error: error.reason, field: "email", status: 400)
        }
        do {
            _ = try PasswordSignIn.password(fields["password"], forNewAccount: true)
        } catch let error as CloudKitError {
            return try showSetup(context, code: code, email: email, error: error.reason, field: "password", status: 400)
        }
        // An existing account proves its password first (under the sign-in limits), so the code
        // alone cannot take over someone's account.
        let existing = try services.store.read { reader -> Bool in
            guard let user = try reader.user(recordNameOrEmail: normalized) else { return false }
            return try reader.signInMethods(user: user.recordName).contains { $0.kind == PasswordSignIn.kind }
        }
        if existing {
            do {
                _ = try services.accounts.authenticate(with: services.accounts.password, credential: ["email": normalized, "password": fields["password"] ?? ""],
                                                       address: context.request.head.remoteAddress)
            } catch let error as CloudKitError {
                return try showSetup(context, code: code, email: email, error: error.code == .throttled ? "Too many attempts. Try again later."
                                     : "This email has an account: enter its password.", field: error.code == .throttled ? nil : "password",
                                     status: error.code == .throttled ? 429 : 401)
            }
        }
        guard services.consoleSetup.consume(code) else {
            return try showSetup(context, code: "", email: email, error: "The setup code is wrong or was used.", field: "code", status: 403)
        }
        let added: ConsoleAdmin.Added
        do {
            added = try ConsoleAdmin.add(email: normalized, password: existing ? nil : fields["password"], hasher: services.accounts.hasher, store: services.store)
        } catch {
            services.consoleSetup.restore(code)
            throw error
        }
        guard let user = try services.store.read({ try $0.user(recordNameOrEmail: added.profile.recordName) }) else {
            throw CloudKitError(.internalError, "the new administrator vanished")
        }
        log.message("console: \(normalized) became the first server administrator (setup code used)")
        var response = redirect("/console/")
        response.headers.append(("set-cookie", try sessions.issue(user: user, secure: context.baseURL.hasPrefix("https://"))))
        return response
    }

    func showSignIn(_ context: RequestContext, email: String, error: String?, status: Int) throws -> HTTPResponse {
        if try !ConsoleAdmin.exists(store: services.store) { return redirect("/console/setup") }
        let (cookie, setCookie) = csrf.cookie(context)
        let body = """
            \(ConsoleHTML.notice(context.parameters["done"] == "signed-out" && error == nil ? "You signed out." : nil))
            \(ConsoleHTML.error(error))
            \(ConsoleHTML.form(action: "/console/signin", csrf: csrf.token(cookie), id: "signin", fields: """
                \(ConsoleHTML.field("Email", name: "email", type: "email", value: email, required: true, autocomplete: "username"))
                \(ConsoleHTML.field("Password", name: "password", type: "password", required: true, autocomplete: "current-password"))
                """, button: "Sign in"))
            """
        var response = page(ConsoleHTML.page(title: "Sign in to the console", csrf: nil, body: body), status: status)
        if let setCookie { response.headers.append(("set-cookie", setCookie)) }
        return response
    }

    func submitSignIn(_ context: RequestContext) throws -> HTTPResponse {
        let fields = FormBody.parse(context.request.body)
        guard csrf.check(context, fields) != nil else { return forbidden() }
        let email = fields["email"] ?? ""
        let user: UserAccount
        do {
            user = try services.accounts.authenticate(with: services.accounts.password, credential: fields, address: context.request.head.remoteAddress)
        } catch let error as CloudKitError {
            switch error.code {
            case .throttled:
                var response = try showSignIn(context, email: email, error: "Too many attempts. Try again in \(error.retryAfter ?? 60) seconds.", status: 429)
                response.headers.append(("retry-after", String(error.retryAfter ?? 60)))
                return response
            case .badRequest: return try showSignIn(context, email: email, error: "Enter your email address and password.", status: 400)
            default: return try showSignIn(context, email: email, error: "The email or password is wrong.", status: 401)
            }
        }
        // Any account may sign in; what it sees is decided per page (C50).
        var response = redirect("/console/")
        response.headers.append(("set-cookie", try sessions.issue(user: user, secure: context.baseURL.hasPrefix("https://"))))
        return response
    }
}
