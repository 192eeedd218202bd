import Foundation

/// The operator's wording for the emails the server sends (`tandem serve --mail-templates DIR`;
/// decisions A32). Each template is an optional file in DIR; a missing file keeps the built-in text.
///
/// | File | Email | Placeholders |
/// |---|---|---|
/// | `invitation.txt` | a share invitation | `{{inviter}}`, `{{title}}`, `{{url}}` |
/// | `signup.txt` | the sign-up confirmation link | `{{link}}` |
/// | `already-registered.txt` | a sign-up for an email that has an account | none |
/// | `reset.txt` | the password reset link | `{{link}}` |
///
/// A file may start with a `Subject: ...` line followed by an empty line; the rest is the plain
/// text body (UTF-8, at most 64 KiB). Placeholders are replaced as they are; values never
/// contain line breaks (they are replaced by spaces), so a title cannot add header lines.
public struct MailTemplates: Sendable, Hashable {
    public enum Kind: String, Sendable, CaseIterable {
        case invitation
        case signUp = "signup"
        case alreadyRegistered = "already-registered"
        case reset

        /// The placeholders a template of this kind may use.
        public var placeholders: Set<String> {
            switch self {
            case .invitation: ["inviter", "title", "url"]
            case .signUp, .reset: ["link"]
            case .alreadyRegistered: []
            }
        }
    }

    struct Template: Sendable, Hashable {
        var subject: String?
        var body: String
    }

    var templates: [Kind: Template] = [:]

    public init() {}

    /// A problem with a template file, named with the file.
    public struct Problem: Error, CustomStringConvertible {
        public var description: String
    }

    /// Reads the templates in `directory`.
    /// - Throws: `Problem` when the directory cannot be read, or a file is not UTF-8, is over
    ///   64 KiB, or uses a placeholder its kind does not have.
    public static func load(directory: String) throws -> MailTemplates {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw Problem(description: "\(directory) is not a directory")
        }
        var loaded = MailTemplates()
        for kind in Kind.allCases {
            let path = (directory as NSString).appendingPathComponent(kind.rawValue + ".txt")
            guard FileManager.default.fileExists(atPath: path) else { continue }
            guard let data = FileManager.default.contents(atPath: path) else { throw Problem(description: "\(path): cannot be read") }
            guard data.count <= 65_536 else { throw Problem(description: "\(path): over 64 KiB") }
            guard let text = String(data: data, encoding: .utf8) else { throw Problem(description: "\(path): not UTF-8") }
            let template = parse(text)
            let used = placeholders(in: (template.subject ?? "") + template.body)
            if let unknown = used.subtracting(kind.placeholders).sorted().first {
                let allowed = kind.placeholders.sorted().map { "{{\($0)}}" }.joined(separator: ", ")
                throw Problem(description: "\(path): unknown placeholder {{\(unknown)}} (allowed: \(allowed.isEmpty ? "none" : allowed))")
            }
            loaded.templates[kind] = template
        }
        return loaded
    }

    static func parse(_ text: String) -> Template {
        let text = text.replacingOccurrences(of: "\r\n", with: "\n")
        guard text.hasPrefix("Subject:"), let end = text.range(of: "\n\n") else { return Template(subject: nil, body: text) }
        let subject = text[text.index(text.startIndex, offsetBy: 8)..<end.lowerBound].trimmingCharacters(in: .whitespacesAndNewlines)
        return Template(subject: subject.replacingOccurrences(of: "\n", with: " "), body: String(text[end.upperBound...]))
    }

    static func placeholders(in text: String) -> Set<String> {
        var names = Set<String>()
        var rest = text[...]
        while let open = rest.range(of: "{{"), let close = rest[open.upperBound...].range(of: "}}") {
            names.insert(String(rest[open.upperBound..<close.lowerBound]))
            rest = rest[close.upperBound...]
        }
        return names
    }

    /// `mail` with the operator's subject and body for `kind`, when there is a template.
    func apply(_ kind: Kind, to mail: AccountMail, _ values: [String: String]) -> AccountMail {
        guard let template = templates[kind] else { return mail }
        var result = mail
        if let subject = template.subject { result.subject = Self.fill(subject, values) }
        result.body = Self.fill(template.body, values)
        return result
    }

    /// One pass, so a value that itself holds `{{...}}` is not filled again.
    static func fill(_ text: String, _ values: [String: String]) -> String {
        var result = ""
        var rest = text[...]
        while let open = rest.range(of: "{{"), let close = rest[open.upperBound...].range(of: "}}") {
            result += rest[..<open.lowerBound]
            let name = String(rest[open.upperBound..<close.lowerBound])
            if let value = values[name] {
                result += value.replacingOccurrences(of: "\r", with: " ").replacingOccurrences(of: "\n", with: " ")
            } else {
                result += rest[open.lowerBound..<close.upperBound]
            }
            rest = rest[close.upperBound...]
        }
        return result + rest
    }
}
