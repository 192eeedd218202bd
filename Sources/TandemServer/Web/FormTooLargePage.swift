import Foundation
import TandemCore
import TandemHTTP

/// The page a browser's form gets when its body is over the limit of the page it was sent to
/// (decisions C53): the console's forms (64 KiB; 1 MiB for a schema import, C5) and the share
/// page's (16 KiB, C16). The HTTP layer refuses such a body from its `content-length`, before
/// reading it; a form post (`application/x-www-form-urlencoded` or `multipart/form-data`) is then
/// answered `413` with a page in the page set's frame and headers (CSP included) saying that
/// nothing was saved, with a link back to the form, instead of the API's JSON error body. Other
/// requests to these paths keep the JSON body (`LIMIT_EXCEEDED`).
enum FormTooLargePage {
    /// The 413 page for `head`, or nil when it is not a form sent to a page.
    /// - Parameters:
    ///   - limit: the path's body limit in bytes, as the HTTP layer applied it.
    ///   - uuid: the request ID the log records for the refusal.
    static func response(for head: HTTPRequestHead, limit: Int, uuid: String) -> HTTPResponse? {
        guard head.method == "POST", isForm(head.headers["content-type"]) else { return nil }
        let size = limit % 1024 == 0 ? "\(limit / 1024) KiB" : "\(limit) bytes"
        let reason = "Nothing was saved: this form holds more than the \(size) this page takes. Go back, shorten what you typed and send it again."
        if head.path.hasPrefix("/console/") {
            let back = consoleBack(head.headers["referer"])
            let html = ConsoleHTML.page(title: "Form too large", csrf: nil, body: """
                <p id="problem" role="alert" data-error-code="LIMIT_EXCEEDED">\(ConsoleHTML.escape(reason))</p>
                <p class="hint">Request ID <code>\(uuid)</code>. <a id="back" href="\(ConsoleHTML.escape(back))">Back to the form</a></p>
                """)
            return HTTPResponse(status: 413, headers: [("content-type", "text/html; charset=utf-8")] + ConsolePage.securityHeaders, body: Array(html.utf8))
        }
        if head.path.hasPrefix(SharePage.prefix) {
            let guid = head.path.dropFirst(SharePage.prefix.count).prefix { $0 != "/" }
            let back = ShareTokens.isWellFormed(String(guid)) ? SharePage.prefix + guid : "/"
            let html = """
                <!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">\
                <title>Form too large</title><link rel="stylesheet" href="/share/share.css"></head>\
                <body><main id="main" data-error-code="LIMIT_EXCEEDED"><h1>Form too large</h1><p id="problem" role="alert">\(SharePageHTML.escape(reason))</p>\
                <p>Request ID <code>\(uuid)</code>. <a id="back" href="\(SharePageHTML.escape(back))">Back to the share</a></p></main></body></html>
                """
            return HTTPResponse(status: 413, headers: [("content-type", "text/html; charset=utf-8")] + SharePage.securityHeaders, body: Array(html.utf8))
        }
        return nil
    }

    static func isForm(_ contentType: String?) -> Bool {
        let type = (contentType ?? "").split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        return type == "application/x-www-form-urlencoded" || type == "multipart/form-data"
    }

    /// The console page the form was on: the `Referer`'s path and query when it is a console
    /// page (the console sends `Referrer-Policy: same-origin`), else the console's start. Only the
    /// path is kept, so the link stays on this server whatever the header names.
    static func consoleBack(_ referer: String?) -> String {
        guard let referer, let url = URLComponents(string: referer), url.path.hasPrefix("/console/"),
              !url.path.hasSuffix(".json"), url.path != "/console/signout" else { return "/console/" }
        return url.percentEncodedPath + (url.percentEncodedQuery.map { "?" + $0 } ?? "")
    }
}
