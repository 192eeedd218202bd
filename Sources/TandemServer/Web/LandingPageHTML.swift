/// The HTML of a share landing page, with Open Graph tags so link previews show the share.
/// Every interpolated value is HTML-escaped.
struct LandingPageHTML {
    enum Action {
        /// The viewer already takes part.
        case open
        /// Accept with the viewer's token (records/accept).
        case accept(acceptURL: String, shortGUID: String)
        /// Ask the owner to join (shares/requestAccess).
        case requestAccess(requestURL: String, shortGUID: String)
    }

    var pageURL: String
    var title = "Shared item"
    var description = "Ask the owner for access to this item."
    var imageURL: String?
    var action: Action?
    /// The sign-in page that returns here, for a signed-out visitor (A47); nil when signed in.
    var signInURL: String?
    /// The page was opened with `ckWebAuthToken` in its URL (back from the sign-in page): its
    /// script keeps the token for the buttons and takes it out of the URL.
    var keepsToken = false

    func render() -> String {
        var head = """
            <meta property="og:type" content="website">
            <meta property="og:title" content="\(Self.escape(title))">
            <meta property="og:description" content="\(Self.escape(description))">
            <meta property="og:url" content="\(Self.escape(pageURL))">
            <meta name="twitter:card" content="\(imageURL == nil ? "summary" : "summary_large_image")">
            """
        var image = ""
        if let imageURL {
            head += "\n<meta property=\"og:image\" content=\"\(Self.escape(imageURL))\">"
            image = "<img class=\"thumb\" src=\"\(Self.escape(imageURL))\" alt=\"\">"
        }
        var body = ""
        switch action {
        case .open:
            body = "<p>You have access to this item. Open it in the app.</p>"
        case .accept(let url, let guid):
            body = Self.button(id: "accept", label: "Accept", url: url, payload: "{\"shortGUIDs\":[{\"value\":\"\(guid)\"}]}",
                               done: "Accepted. Open the app to see it.")
        case .requestAccess(let url, let guid):
            body = "<p>This item is private.</p>" + Self.button(id: "request", label: "Request access", url: url,
                                                                  payload: "{\"shortGUIDs\":[{\"value\":\"\(guid)\"}]}",
                                                                  done: "Request sent. The owner will decide.")
        case nil:
            body = "<p>This item is private. Ask the owner for access.</p>"
        }
        if let signInURL {
            body += "<p><a id=\"signin\" href=\"\(Self.escape(signInURL))\">Sign in</a> to open or accept it.</p>"
        }
        return """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(Self.escape(title))</title>
            \(head)
            <style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#222}
            .thumb{display:block;max-width:100%;margin:1rem 0;border-radius:12px}button{font-size:1rem;padding:.6rem 1.2rem;border-radius:8px}
            #status{color:#555}</style>
            </head>
            <body>
            <h1>\(Self.escape(title))</h1>
            <p>\(Self.escape(description))</p>
            \(image)
            \(body)
            <p id="status"></p>
            \(keepsToken ? Self.keepToken : "")
            </body>
            </html>
            """
    }

    /// Back from the sign-in page, the URL holds `ckWebAuthToken` (A47): kept where the buttons
    /// look for the token, and taken out of the address bar and history.
    static let keepToken = """
        <script>
        (function () {
          const query = new URLSearchParams(location.search), token = query.get("ckWebAuthToken");
          if (!token) return;
          localStorage.setItem("tandem.token", token);
          query.delete("ckWebAuthToken");
          history.replaceState(null, "", location.pathname + (query.toString() ? "?" + query.toString() : ""));
        })();
        </script>
        """

    /// A button that posts `payload` with the user token kept in this browser (localStorage
    /// `tandem.token`, asked for once). A token the server refuses (401) is forgotten, so the
    /// next click asks again instead of failing forever.
    private static func button(id: String, label: String, url: String, payload: String, done: String) -> String {
        """
        <button id="\(id)">\(escape(label))</button>
        <script>
        document.getElementById(\(script(id))).addEventListener("click", async (event) => {
          const button = event.currentTarget, status = document.getElementById("status");
          let token = localStorage.getItem("tandem.token");
          if (!token) { token = prompt("Your Tandem user token"); if (!token) return; localStorage.setItem("tandem.token", token); }
          button.disabled = true;
          try {
            const response = await fetch(\(script(url)), {method: "POST", headers: {"Authorization": "Bearer " + token,
              "Content-Type": "application/json"}, body: \(script(payload))});
            const json = await response.json().catch(() => ({}));
            const item = (json.results || [])[0] || json;
            if (response.status === 401) localStorage.removeItem("tandem.token");
            status.textContent = response.ok && !item.serverErrorCode ? \(script(done))
              : (item.reason || "Something went wrong.") + (response.status === 401 ? " Click again to enter another token." : "");
          } catch (error) {
            status.textContent = "Could not reach the server. Try again.";
          } finally {
            button.disabled = false;
          }
        });
        </script>
        """
    }

    /// `text` as a JavaScript string literal for inside `<script>`, where HTML escapes are not
    /// decoded: JSON string escaping, with `<`, `>`, `&`, `'` and the line separators as `\u`
    /// escapes so no value can close the element or the string.
    static func script(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "<", ">", "&", "'", "\u{2028}", "\u{2029}", "\u{0}"..."\u{1F}":
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    static func escape(_ text: String) -> String {
        var out = ""
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(c)
            }
        }
        return out
    }
}
