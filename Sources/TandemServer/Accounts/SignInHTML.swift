import Foundation

/// The HTML of the sign-in pages: server-rendered forms, one stylesheet and one script served by
/// the server (`/signin/signin.css`, `/signin/signin.js`), no inline script or style, so the
/// pages run under `script-src 'self'`. Every interpolated value is HTML-escaped.
enum SignInHTML {
    /// A whole page around `body`.
    static func page(title: String, body: String) -> String {
        """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>\(escape(title))</title>
        <link rel="stylesheet" href="/signin/signin.css">
        <script src="/signin/signin.js" defer></script>
        </head>
        <body>
        <main>
        <h1>\(escape(title))</h1>
        \(body)
        </main>
        </body>
        </html>
        """
    }

    static func hidden(_ name: String, _ value: String) -> String {
        "<input type=\"hidden\" name=\"\(escape(name))\" value=\"\(escape(value))\">"
    }

    static func error(_ message: String?) -> String {
        message.map { "<p class=\"error\" id=\"error\" role=\"alert\">\(escape($0))</p>" } ?? ""
    }

    /// The email-and-password form. The Cancel button tells the opener (an app's allowed
    /// origins), or for a share page's sign-in goes back to it (A47).
    static func signInForm(app: SignInApp, csrf: String, email: String = "", error: String? = nil, providers: [String] = []) -> String {
        let cancel = app.returnPath.map { "<a id=\"cancel\" href=\"\(escape($0))\">Cancel</a>" }
            ?? "<button type=\"button\" id=\"cancel\" data-origins=\"\(escape(app.origins.joined(separator: " ")))\">Cancel</button>"
        return page(title: "Sign in to \(app.name)", body: """
            \(Self.error(error))
            <form method="post" action="/signin" id="signin">
            \(hidden("csrf", csrf))\(app.field)
            <label>Email <input type="email" name="email" id="email" autocomplete="username" required value="\(escape(email))"></label>
            <label>Password <input type="password" name="password" id="password" autocomplete="current-password" required></label>
            <button type="submit" id="submit">Sign in</button>
            </form>
            \(providerLinks(providers, app: app))
            <p><a id="signup-link" href="/signin/signup?\(escape(app.query))">Create an account</a>
            · <a id="reset-link" href="/signin/reset?\(escape(app.query))">Forgot your password?</a></p>
            \(PasskeyHTML.signIn(csrf: csrf, app: app))
            <p>\(cancel)</p>
            """)
    }

    static func signUpForm(app: SignInApp, csrf: String, error: String? = nil) -> String {
        page(title: "Create an account for \(app.name)", body: """
            \(Self.error(error))
            <form method="post" action="/signin/signup" id="signup">
            \(hidden("csrf", csrf))\(app.field)
            <label>Name <input type="text" name="name" id="name" autocomplete="name" maxlength="200"></label>
            <label>Email <input type="email" name="email" id="email" autocomplete="username" required></label>
            <label>Password <input type="password" name="password" id="password" autocomplete="new-password" minlength="8" required></label>
            <button type="submit" id="submit">Create account</button>
            </form>
            \(PasskeyHTML.signUp(csrf: csrf, app: app))
            <p><a href="/signin?\(escape(app.query))">I have an account</a></p>
            """)
    }

    static func checkEmail(app: SignInApp) -> String {
        page(title: "Check your email", body: """
            <p id="status">If this address can be used, a message with a link to confirm it is on its way. Follow it, then sign in.</p>
            <p><a href="/signin?\(escape(app.query))">Sign in</a></p>
            """)
    }

    /// The first sign-in to an app: allow or decline.
    static func consent(app: SignInApp, email: String, csrf: String, ticket: String) -> String {
        page(title: "Allow \(app.name)?", body: """
            <p id="consent-text">\(escape(app.name)) wants to use your account \(escape(email)): your name, email and the data you keep in this app.</p>
            <form method="post" action="/signin/consent" id="consent">
            \(hidden("csrf", csrf))\(app.field)\(hidden("ticket", ticket))
            <button type="submit" name="decision" value="allow" id="allow">Allow</button>
            <button type="submit" name="decision" value="deny" id="deny">Don't allow</button>
            </form>
            """)
    }

    /// The end of the flow in a popup: the script posts `{ckSession}` (or `{errorMessage}`) to the
    /// opener at each allowed origin (a window whose origin is not one of them receives nothing)
    /// and closes the window.
    static func complete(session: String?, errorMessage: String?, origins: [String]) -> String {
        var data = "data-origins=\"\(escape(origins.joined(separator: " ")))\""
        if let session { data += " data-session=\"\(escape(session))\"" }
        if let errorMessage { data += " data-error=\"\(escape(errorMessage))\"" }
        let text = session != nil ? "You are signed in. You can close this window." : (errorMessage ?? "")
        return page(title: session != nil ? "Signed in" : "Not signed in", body: """
            <p id="tandem-result" \(data)>\(escape(text))</p>
            """)
    }

    /// The forms behind emailed links (`verify`, `password`) and the reset request (`reset`).
    static func linkForm(step: String, csrf: String, app: SignInApp, linkToken: String, error: String? = nil) -> String {
        let fields: String
        let title: String
        switch step {
        case "verify":
            title = "Confirm your email"
            fields = "<button type=\"submit\" id=\"submit\">Confirm and create my account</button>"
        case "password":
            title = "Choose a new password"
            fields = """
                <label>New password <input type="password" name="password" id="password" autocomplete="new-password" minlength="8" required></label>
                <button type="submit" id="submit">Set password</button>
                """
        default:
            title = "Reset your password"
            fields = """
                <label>Email <input type="email" name="email" id="email" autocomplete="username" required></label>
                <button type="submit" id="submit">Send me a link</button>
                """
        }
        return page(title: title, body: """
            \(Self.error(error))
            <form method="post" action="/signin/\(escape(step))" id="link-form">
            \(hidden("csrf", csrf))\(app.field)\(hidden("token", linkToken))
            \(fields)
            </form>
            """)
    }

    static func done(_ message: String, app: SignInApp) -> String {
        page(title: "Done", body: """
            <p id="status">\(escape(message))</p>
            <p><a href="/signin?\(escape(app.query))">Sign in</a></p>
            """)
    }

    static func problem(_ message: String) -> String {
        page(title: "Cannot sign in here", body: "<p class=\"error\" id=\"error\">\(escape(message))</p>")
    }

    static func escape(_ text: String) -> String { SharePageHTML.escape(text) }

    static func percent(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "" }

    /// `/signin/signin.js`: the popup half of CloudKit JS's sign-in. Never posts with target "*".
    static let script = """
        "use strict";
        (function () {
          function post(message, origins) {
            if (!window.opener) return false;
            origins.split(" ").filter(Boolean).forEach(function (origin) {
              if (origin !== "*") window.opener.postMessage(message, origin);
            });
            return true;
          }
          document.addEventListener("DOMContentLoaded", function () {
            var result = document.getElementById("tandem-result");
            if (result) {
              var message = result.dataset.session ? { ckSession: result.dataset.session } : { errorMessage: result.dataset.error || "Sign-in failed." };
              if (post(message, result.dataset.origins || "")) window.close();
            }
            var cancel = document.getElementById("cancel");
            if (cancel) {
              cancel.addEventListener("click", function () {
                if (post({ errorMessage: "The user cancelled sign-in." }, cancel.dataset.origins || "")) window.close();
              });
            }
          });
        })();

        """

    static let stylesheet = """
        body{font-family:system-ui,sans-serif;max-width:26rem;margin:3rem auto;padding:0 1rem;color:#222}
        label{display:block;margin:.8rem 0}input[type=email],input[type=password],input[type=text]{display:block;width:100%;font-size:1rem;padding:.5rem;box-sizing:border-box}
        button{font-size:1rem;padding:.6rem 1.2rem;border-radius:8px;margin:.4rem .4rem .4rem 0}.error{color:#b00020}

        """
}
