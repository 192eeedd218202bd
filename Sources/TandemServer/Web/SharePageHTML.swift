import TandemCore

/// The HTML of a share page (`/share/{shortGUID}`; decisions C12–C15): Open Graph tags so link
/// previews show the share, then the viewer's actions as plain forms that work without script.
/// Every interpolated value is HTML-escaped; the page has no inline script or style (its only
/// script and stylesheet are `ShareAssets`, under the page's CSP).
struct SharePageHTML {
    /// A refusal to show beside the form field it concerns (C15).
    struct Problem {
        /// The form's id (`invite`, `public-link`, `p-3`, …).
        var form: String
        /// The field's `name`, when the reason concerns one field; else it follows the form.
        var field: String?
        var message: String
        /// The service's `serverErrorCode`, also on `<main data-error-code>` for tests and tools.
        var code: String
        /// What the person typed, shown again.
        var values: [String: String] = [:]
    }

    var view: SharePageView
    var guid: String
    /// The page's absolute URL as asked for (the same for a private share and for none).
    var pageURL: String
    /// The CSRF field of this page's forms; nil when signed out (no forms).
    var csrf: String?
    /// The sign-in page that returns here (A47), for a signed-out visitor of a well-formed URL.
    var signInURL: String?
    /// What the last action did (`?done=` after a redirect).
    var notice: String?
    var problem: Problem?
    /// Where the forms post: `/share/{shortGUID}`, or the console's page for it (C17).
    var formBase: String?
    /// Said at the top instead of "Signed in as" when a console administrator acts for the owner (C17).
    var actingNote: String?

    var description: String {
        view.ownerName.map { "Shared by \($0)" } ?? "Ask the owner for access to this item."
    }

    /// The thumbnail, for whom the page shows the title (R5); a link preview (`og:image`) only
    /// of a public share, since previewers are signed out.
    var imageURL: String? { view.hasThumbnail ? pageURL + "/thumbnail" : nil }
    var previewImageURL: String? { view.publicPermission != .none ? imageURL : nil }

    func render() -> String {
        var head = """
            <meta property="og:type" content="website">
            <meta property="og:title" content="\(Self.escape(view.title))">
            <meta property="og:description" content="\(Self.escape(description))">
            <meta property="og:url" content="\(Self.escape(pageURL))">
            <meta name="twitter:card" content="\(previewImageURL == nil ? "summary" : "summary_large_image")">
            """
        var image = ""
        if let previewImageURL { head += "\n<meta property=\"og:image\" content=\"\(Self.escape(previewImageURL))\">" }
        if let imageURL { image = "<img class=\"thumb\" src=\"\(Self.escape(imageURL))\" alt=\"\">" }
        let errorCode = problem.map { " data-error-code=\"\(Self.escape($0.code))\"" } ?? ""
        return """
            <!doctype html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(Self.escape(view.title))</title>
            \(head)
            <link rel="stylesheet" href="/share/share.css">
            <script src="/share/share.js" defer></script>
            </head>
            <body>
            \(viewerBar)
            <main id="main"\(errorCode)>
            <h1>\(Self.escape(view.title))</h1>
            <p id="shared-by">\(Self.escape(description))</p>
            \(view.type.map { "<p id=\"share-type\">Type: <code>\(Self.escape($0))</code></p>" } ?? "")
            \(image)
            \(notice.map { "<p class=\"notice\" id=\"notice\" role=\"status\">\(Self.escape($0))</p>" } ?? "")
            \(placed(body))
            </main>
            </body>
            </html>
            """
    }

    // MARK: Parts

    /// `body`, with the problem at the top when no form on the page is the one it concerns.
    private func placed(_ body: String) -> String {
        guard let problem, !body.contains("role=\"alert\""), !body.contains("aria-invalid") else { return body }
        return "<p class=\"field-error\" id=\"\(Self.escape(problem.form))-error\" role=\"alert\">\(Self.escape(problem.message))</p>" + body
    }

    private var viewerBar: String {
        if let actingNote { return "<header><p id=\"acting\">\(Self.escape(actingNote))</p><p><a href=\"/console/\">Back to the console</a></p></header>" }
        guard let csrf, let name = view.viewerName else { return "" }
        return "<header><p id=\"viewer\">Signed in as \(Self.escape(name))</p>"
            + form("signout", csrf: csrf, fields: "", button: "Sign out", inline: true) + "</header>"
    }

    private var body: String {
        guard let csrf else {
            let what = view.ownerName == nil ? "<p id=\"unavailable\">This item is private. Ask the owner for access.</p>" : ""
            let signIn = signInURL.map { "<p><a id=\"signin\" href=\"\(Self.escape($0))\" class=\"button\">Sign in</a> to open, accept or ask for it.</p>" } ?? ""
            return what + signIn
        }
        switch view.standing {
        case .signedOut, .unavailable:
            return "<p id=\"unavailable\">This item is not available to you. Ask its owner to share it with you.</p>"
        case .invitee:
            return "<p>You are invited to this item.</p><div class=\"actions\">"
                + form("accept", csrf: csrf, fields: "", button: "Accept") + form("decline", csrf: csrf, fields: "", button: "Decline", secondary: true)
                + "</div>" + problemText(["accept", "decline"])
        case .publicVisitor:
            return "<p>Anyone with the link can open this item.</p>" + form("accept", csrf: csrf, fields: "", button: "Accept") + problemText(["accept"])
        case .mayRequest(let asked):
            if asked { return "<p id=\"requested\">You asked for access. The owner will decide.</p>" }
            return "<p>This item is private. You can ask its owner for access.</p>"
                + form("request", csrf: csrf, fields: "", button: "Request access") + problemText(["request"])
        case .participant(let permission):
            return "<p id=\"access\">You have access (\(permission == .readWrite ? "can make changes" : "view only")). Open it in the app.</p>"
                + leave(csrf)
        case .owner, .administrator:
            return manage(csrf)
        }
    }

    private func leave(_ csrf: String) -> String {
        "<section aria-labelledby=\"leave-heading\"><h2 id=\"leave-heading\">Leave</h2><p class=\"hint\">You lose access to this item.</p>"
            + form("leave", csrf: csrf, fields: "", button: "Leave", danger: true) + problemText(["leave"]) + "</section>"
    }

    /// The owner's and administrators' page: UICloudSharingController's share management (C14).
    private func manage(_ csrf: String) -> String {
        let isOwner = view.standing == .owner
        var html = """
            <section aria-labelledby="link-heading"><h2 id="link-heading">Link</h2>
            <label for="share-link">Share link</label>
            <div class="copy"><input id="share-link" type="text" readonly value="\(Self.escape(pageURL))"><button type="button" id="copy-link" hidden>Copy link</button></div>
            <p class="hint" id="copy-status" role="status"></p>
            """
        if isOwner {
            let values = problem?.form == "public-link" ? problem!.values : [:]
            let current = values["permission"] ?? view.publicPermission.rawValue
            let options = [("NONE", "Off: only invited people"), ("READ_ONLY", "Anyone with the link can view"),
                           ("READ_WRITE", "Anyone with the link can make changes")].filter { value, _ in
                // Only what the allowed sharing options allow, and what the share has now (R18).
                value == view.publicPermission.rawValue || view.allowed.allowsPublic(Share.Permission(rawValue: value) ?? .unknown)
            }
            let requests = values.isEmpty ? view.allowsAccessRequests : values["requests"] == "on"
            html += form("public-link", csrf: csrf, fields: select("Public link", name: "permission", id: "public-permission", options: options,
                                                                     selected: current, error: fieldProblem("public-link", "permission"))
                         + "<label class=\"check\" for=\"field-requests\"><input type=\"checkbox\" name=\"requests\" id=\"field-requests\"\(requests ? " checked" : "")> Let people without access ask for it</label>",
                         button: "Save link settings") + problemText(["public-link"])
        }
        html += "</section>"
        html += participantsTable(csrf, isOwner: isOwner)
        let values = problem?.form == "invite" ? problem!.values : [:]
        let invitable = allowedPermissions()
        // A share for anyone with the link only, or with no permission left to give, invites nobody (R18).
        if view.allowed.access != .anyoneWithLink && !invitable.isEmpty {
            html += "<section aria-labelledby=\"invite-heading\"><h2 id=\"invite-heading\">Invite</h2>"
                + form("invite", csrf: csrf, fields: field("Email address", name: "email", type: "email", value: values["email"] ?? "",
                                                            autocomplete: "off", error: fieldProblem("invite", "email"))
                       + select("Permission", name: "permission", id: "invite-permission", options: invitable,
                                selected: values["permission"] ?? invitable[0].0, error: nil),
                       button: "Send invitation") + problemText(["invite"])
                + "<p class=\"hint\">They get an email with the link, and accept it here.</p></section>"
        }
        if !view.requesters.isEmpty {
            html += "<section aria-labelledby=\"requests-heading\"><h2 id=\"requests-heading\">Access requests</h2><ul id=\"requesters\">"
            for (index, requester) in view.requesters.enumerated() {
                let who = Self.hidden("user", requester.userRecordName)
                html += "<li><span>\(Self.escape(requester.name))</span> "
                    + form("approve-\(index)", action: "approve", csrf: csrf, fields: who, button: "Approve", inline: true)
                    + form("deny-\(index)", action: "deny", csrf: csrf, fields: who, button: "Deny", inline: true, secondary: true)
                    + problemText(["approve-\(index)", "deny-\(index)"]) + "</li>"
            }
            html += "</ul></section>"
        }
        if isOwner {
            html += "<section aria-labelledby=\"stop-heading\"><h2 id=\"stop-heading\">Stop sharing</h2>"
                + form("stop", csrf: csrf, fields: "<label class=\"check\" for=\"field-confirm\"><input type=\"checkbox\" name=\"confirm\" id=\"field-confirm\" value=\"yes\""
                       + (fieldProblem("stop", "confirm") != nil ? " aria-invalid=\"true\" aria-describedby=\"field-confirm-error\"" : "")
                       + "> Yes, stop sharing: everyone else loses access</label>"
                       + (fieldProblem("stop", "confirm").map { "<span class=\"field-error\" id=\"field-confirm-error\">\(Self.escape($0))</span>" } ?? ""),
                       button: "Stop sharing", danger: true)
                + problemText(["stop"]) + "</section>"
        } else {
            html += leave(csrf)
        }
        return html
    }

    private func participantsTable(_ csrf: String, isOwner: Bool) -> String {
        var rows = ""
        for (index, person) in view.participants.enumerated() {
            let id = "p-\(index)"
            let who = Self.hidden("participant", person.participantID)
            let status = person.declined ? "Declined" : Self.statusNames[person.status] ?? person.status.rawValue
            var actions = ""
            // A public user's permission is the link's; only the owner changes roles (the service's rules).
            if person.role != .publicUser && !person.isViewer {
                var fields = who + select("Permission", name: "permission", id: "\(id)-permission", options: allowedPermissions(keeping: person.permission),
                                          selected: person.permission.rawValue, error: nil, compact: true)
                if isOwner {
                    fields += select("Role", name: "role", id: "\(id)-role", options: [("USER", "Participant"), ("ADMINISTRATOR", "Administrator")],
                                     selected: person.role.rawValue, error: nil, compact: true)
                }
                actions += form(id, action: "participant", csrf: csrf, fields: fields, button: "Change", inline: true)
            }
            if !person.isViewer {
                actions += form("\(id)-remove", action: "remove", csrf: csrf, fields: who, button: "Remove", inline: true, danger: true)
            }
            actions += problemText([id, "\(id)-remove"])
            // `data-label` names the column where a narrow screen shows the row as lines (ShareAssets).
            let contact = person.contact == person.name ? "" : "<span class=\"hint\">\(Self.escape(person.contact))</span>"
            rows += "<tr><td>\(Self.escape(person.name))\(contact)</td>"
                + "<td data-label=\"Role\">\(Self.escape(Self.roleNames[person.role] ?? person.role.rawValue))</td>"
                + "<td data-label=\"Permission\">\(Self.escape(Self.permissionNames[person.permission] ?? person.permission.rawValue))</td>"
                + "<td data-label=\"Status\">\(Self.escape(status))</td><td>\(actions)</td></tr>"
        }
        if rows.isEmpty { rows = "<tr><td colspan=\"5\">Nobody yet. Invite people below.</td></tr>" }
        return """
            <section aria-labelledby="people-heading"><h2 id="people-heading">People</h2><div class="scroll">
            <table id="participants"><thead><tr><th scope="col">Person</th><th scope="col">Role</th><th scope="col">Permission</th><th scope="col">Status</th><th scope="col">Change</th></tr></thead>
            <tbody>\(rows)</tbody></table></div></section>
            """
    }

    // MARK: Helpers

    /// The participant permissions the allowed sharing options allow (R18), with `current`
    /// (what someone has now) kept so the page shows it.
    private func allowedPermissions(keeping current: Share.Permission? = nil) -> [(String, String)] {
        Self.permissions.filter { value, _ in
            value == current?.rawValue || view.allowed.allowsParticipant(Share.Permission(rawValue: value) ?? .unknown)
        }
    }

    static let permissions = [("READ_ONLY", "Can view"), ("READ_WRITE", "Can make changes")]
    static let permissionNames: [Share.Permission: String] = [.readOnly: "Can view", .readWrite: "Can make changes", .none: "None"]
    static let roleNames: [Share.Role: String] = [.administrator: "Administrator", .privateUser: "Participant", .publicUser: "Anyone with the link"]
    static let statusNames: [Share.AcceptanceStatus: String] = [.pending: "Invited", .accepted: "Accepted", .removed: "Removed"]

    /// The problem's message when it concerns `field` of `form`.
    private func fieldProblem(_ form: String, _ field: String) -> String? {
        problem?.form == form && problem?.field == field ? problem?.message : nil
    }

    /// The problem of one of `forms` that concerns no single field, shown after their buttons.
    private func problemText(_ forms: [String]) -> String {
        guard let problem, problem.field == nil, forms.contains(problem.form) else { return "" }
        return "<p class=\"field-error\" id=\"\(Self.escape(problem.form))-error\" role=\"alert\">\(Self.escape(problem.message))</p>"
    }

    /// A POST form to `/share/{guid}/{action}` with its CSRF field; the button's id is `{id}-submit`.
    private func form(_ id: String, action: String? = nil, csrf: String, fields: String, button: String, inline: Bool = false,
                      danger: Bool = false, secondary: Bool = false) -> String {
        let target = "\(formBase ?? "/share/\(guid)")/\(action ?? id)"
        let kind = danger ? " class=\"danger\"" : secondary ? " class=\"secondary\"" : ""
        return "<form method=\"post\" action=\"\(Self.escape(target))\" id=\"\(Self.escape(id))\"\(inline ? " class=\"inline\"" : "")>"
            + Self.hidden("csrf", csrf) + (action == nil ? "" : Self.hidden("form", id)) + fields
            + "<button type=\"submit\" id=\"\(Self.escape(id))-submit\"\(kind)>\(Self.escape(button))</button></form>"
    }

    private func field(_ label: String, name: String, type: String, value: String, autocomplete: String?, error: String?) -> String {
        ConsoleHTML.field(label, name: name, type: type, value: value, required: true, autocomplete: autocomplete, error: error)
    }

    /// A labelled `<select>`; `compact` hides the label visually (it stays for screen readers).
    private func select(_ label: String, name: String, id: String, options: [(String, String)], selected: String, error: String?,
                        compact: Bool = false) -> String {
        let fieldID = "field-" + id
        let described = error == nil ? "" : " aria-invalid=\"true\" aria-describedby=\"\(fieldID)-error\""
        let choices = options.map { value, text in
            "<option value=\"\(Self.escape(value))\"\(value == selected ? " selected" : "")>\(Self.escape(text))</option>"
        }.joined()
        return "<label for=\"\(fieldID)\"\(compact ? " class=\"visually-hidden\"" : "")>\(Self.escape(label))</label>"
            + "<select name=\"\(Self.escape(name))\" id=\"\(fieldID)\"\(described)>\(choices)</select>"
            + (error.map { "<span class=\"field-error\" id=\"\(fieldID)-error\">\(Self.escape($0))</span>" } ?? "")
    }

    static func hidden(_ name: String, _ value: String) -> String { ConsoleHTML.hidden(name, value) }

    /// `text` for HTML text and quoted attribute values: `& < > " '` as character references.
    /// Scalar by scalar, not Character by Character: a quote followed by a combining mark
    /// (`"\u{301}`) is one Swift Character that equals no `"`, yet the browser's parser still
    /// ends the attribute at the quote.
    static func escape(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out.append(contentsOf: "&amp;".unicodeScalars)
            case "<": out.append(contentsOf: "&lt;".unicodeScalars)
            case ">": out.append(contentsOf: "&gt;".unicodeScalars)
            case "\"": out.append(contentsOf: "&quot;".unicodeScalars)
            case "'": out.append(contentsOf: "&#39;".unicodeScalars)
            default: out.append(scalar)
            }
        }
        return String(out)
    }
}
