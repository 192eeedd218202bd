import Foundation

/// The console's page frame and form parts: server-rendered HTML, one stylesheet and one script
/// served by the server (`/console/console.css`, `/console/console.js`), no inline script or
/// style, so pages run under the console's CSP (decisions C4). Every interpolated value is
/// HTML-escaped with `escape`.
enum ConsoleHTML {
    static func escape(_ text: String) -> String { SharePageHTML.escape(text) }

    /// A whole page. `csrf` nil: a signed-out page (no navigation, no sign-out button). `admin`
    /// false: the navigation of an account that is not an administrator, without the
    /// administrators' pages (C50).
    static func page(title: String, csrf: String?, admin: Bool = true, current: String = "", body: String) -> String {
        var nav = ""
        if let csrf {
            let links = admin
                ? [("containers", "/console/", "Containers"), ("users", "/console/users", "Users"), ("logs", "/console/logs", "Request log"),
                   ("metrics", "/console/metrics", "Metrics"), ("account", "/console/account", "Account")]
                : [("containers", "/console/", "Containers"), ("account", "/console/account", "Account")]
            nav = "<nav aria-label=\"Console\"><ul>" + links.map { id, href, label in
                "<li><a id=\"nav-\(id)\" href=\"\(href)\"\(id == current ? " aria-current=\"page\"" : "")>\(label)</a></li>"
            }.joined() + "</ul>" + form(action: "/console/signout", csrf: csrf, id: "signout", inline: true,
                                        fields: "", button: "Sign out") + "</nav>"
        }
        return """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(escape(title)) · Tandem console</title>
            <link rel="stylesheet" href="/console/console.css">
            <script src="/console/console.js" defer></script>
            </head>
            <body>
            <header><p class="brand"><a href="/console/">Tandem console</a></p>\(nav)</header>
            <main id="main">
            <h1>\(escape(title))</h1>
            \(body)
            </main>
            </body>
            </html>
            """
    }

    /// A POST form with its CSRF field. `fields`: the inputs' HTML.
    static func form(action: String, csrf: String, id: String, inline: Bool = false, fields: String, button: String,
                     danger: Bool = false) -> String {
        """
        <form method="post" action="\(escape(action))" id="\(escape(id))"\(inline ? " class=\"inline\"" : "")>\(hidden("csrf", csrf))\(fields)<button type="submit" id="\(escape(id))-submit"\(danger ? " class=\"danger\"" : "")>\(escape(button))</button></form>
        """
    }

    static func hidden(_ name: String, _ value: String) -> String {
        "<input type=\"hidden\" name=\"\(escape(name))\" value=\"\(escape(value))\">"
    }

    /// A labelled input; `error` is shown beside it and tied to it with `aria-describedby`.
    static func field(_ label: String, name: String, type: String = "text", value: String = "", required: Bool = false,
                      autocomplete: String? = nil, placeholder: String? = nil, error: String? = nil, hint: String? = nil) -> String {
        let id = "field-" + name
        var describedBy: [String] = []
        var after = ""
        if let hint { describedBy.append(id + "-hint"); after += "<span class=\"hint\" id=\"\(id)-hint\">\(escape(hint))</span>" }
        if let error { describedBy.append(id + "-error"); after += "<span class=\"field-error\" id=\"\(id)-error\">\(escape(error))</span>" }
        var attributes = "type=\"\(type)\" name=\"\(escape(name))\" id=\"\(id)\" value=\"\(escape(value))\""
        if required { attributes += " required" }
        if let autocomplete { attributes += " autocomplete=\"\(autocomplete)\"" }
        if let placeholder { attributes += " placeholder=\"\(escape(placeholder))\"" }
        if !describedBy.isEmpty { attributes += " aria-describedby=\"\(describedBy.joined(separator: " "))\"" }
        if error != nil { attributes += " aria-invalid=\"true\"" }
        return "<label for=\"\(id)\">\(escape(label))</label><input \(attributes)>\(after)"
    }

    /// `text` escaped as a `<textarea>`'s content, after a line break: the HTML parser drops one
    /// line break that follows the opening tag, so without it a value that starts with one
    /// would lose it (decisions C32).
    static func textareaText(_ text: String) -> String { "\n" + escape(text) }

    static func error(_ message: String?) -> String {
        message.map { "<p class=\"error\" id=\"error\" role=\"alert\">\(escape($0))</p>" } ?? ""
    }

    static func notice(_ message: String?) -> String {
        message.map { "<p class=\"notice\" id=\"notice\" role=\"status\">\(escape($0))</p>" } ?? ""
    }

    /// A table with a caption; `rows` are already-escaped cells.
    static func table(id: String, caption: String, headers: [String], rows: [[String]], empty: String) -> String {
        guard !rows.isEmpty else { return "<p id=\"\(id)-empty\">\(escape(empty))</p>" }
        let head = headers.map { "<th scope=\"col\">\(escape($0))</th>" }.joined()
        let body = rows.map { "<tr>" + $0.map { "<td>\($0)</td>" }.joined() + "</tr>" }.joined(separator: "\n")
        return """
            <div class="scroll" tabindex="0" role="region" aria-label="\(escape(caption))"><table id="\(id)"><caption>\(escape(caption))</caption><thead><tr>\(head)</tr></thead><tbody>
            \(body)
            </tbody></table></div>
            """
    }

    /// Milliseconds since 1970 as `2026-12-03 04:05 UTC`.
    static func time(_ milliseconds: Int64?) -> String {
        guard let milliseconds else { return "—" }
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(format: "%04d-%02d-%02d %02d:%02d UTC", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday, parts.tm_hour, parts.tm_min)
    }

    /// Milliseconds since 1970 as `04:05:06` (UTC), for the request log.
    static func clock(_ milliseconds: Int64) -> String {
        var seconds = time_t(milliseconds / 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(format: "%02d:%02d:%02d", parts.tm_hour, parts.tm_min, parts.tm_sec)
    }

    /// Percent-encodes all but RFC 3986's unreserved characters (letters, digits, `-._~`).
    static func percent(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? "" }

    static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}
