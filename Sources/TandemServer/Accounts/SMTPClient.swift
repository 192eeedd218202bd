import CCurl
import Foundation
import TandemCrypto

/// Sends one email over SMTP with libcurl (`smtp://` with STARTTLS when offered, or `smtps://`),
/// the only file that calls libcurl. Blocking: call it from the mailer's own thread.
struct SMTPClient: Sendable {
    /// `smtp://host:port` or `smtps://host:port`.
    var url: String
    /// The envelope and `From:` address, e.g. `noreply@example.com`.
    var from: String
    var username: String?
    var password: String?
    /// Seconds for the whole exchange.
    var timeoutSeconds = 30

    static let initialized: Bool = {
        curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK
    }()

    /// The RFC 5322 message: headers, a blank line, the body with CRLF line ends.
    static func message(_ mail: AccountMail, from: String, date: Date = Date()) -> [UInt8] {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss Z"
        let domain = from.split(separator: "@").last.map(String.init) ?? "localhost"
        let id = Digest.hex(Digest.randomBytes(12))
        let headers = ["From: \(from)", "To: \(mail.to)", "Subject: \(Self.headerText(mail.subject))", "Date: \(formatter.string(from: date))",
                       "Message-ID: <\(id)@\(domain)>", "MIME-Version: 1.0", "Content-Type: text/plain; charset=utf-8",
                       "Content-Transfer-Encoding: 8bit"]
        let body = mail.body.replacingOccurrences(of: "\r\n", with: "\n").replacingOccurrences(of: "\n", with: "\r\n")
        return Array((headers.joined(separator: "\r\n") + "\r\n\r\n" + body).utf8)
    }

    /// A header value on one line; non-ASCII text as an RFC 2047 encoded word (a share title or
    /// a person's name may be in any script).
    static func headerText(_ text: String) -> String {
        let flat = text.replacingOccurrences(of: "\r", with: " ").replacingOccurrences(of: "\n", with: " ")
        guard flat.unicodeScalars.contains(where: { $0.value > 0x7E || $0.value < 0x20 }) else { return flat }
        // Encoded words stay under 76 characters (RFC 2047 §2): 45 bytes a word, whole characters.
        var words: [String] = []
        var chunk = ""
        for character in flat {
            if chunk.utf8.count + String(character).utf8.count > 45 {
                words.append(chunk)
                chunk = ""
            }
            chunk.append(character)
        }
        words.append(chunk)
        return words.map { "=?utf-8?B?" + Data($0.utf8).base64EncodedString() + "?=" }.joined(separator: "\r\n ")
    }

    /// Sends `mail`.
    /// - Throws: `SMTPError` with libcurl's message when the server refuses or cannot be reached.
    func send(_ mail: AccountMail) throws {
        guard Self.initialized, let curl = curl_easy_init() else { throw SMTPError(message: "libcurl could not start") }
        defer { curl_easy_cleanup(curl) }
        let payload = Payload(bytes: Self.message(mail, from: from))
        let box = Unmanaged.passRetained(payload)
        defer { box.release() }
        let recipients = curl_slist_append(nil, "<\(mail.to)>")
        defer { curl_slist_free_all(recipients) }
        var error = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        var code = CURLE_OK
        func set(_ result: CURLcode) { if code == CURLE_OK { code = result } }
        set(tandem_curl_setopt_string(curl, CURLOPT_URL, url))
        set(tandem_curl_setopt_string(curl, CURLOPT_MAIL_FROM, "<\(from)>"))
        set(tandem_curl_setopt_pointer(curl, CURLOPT_MAIL_RCPT, recipients))
        set(tandem_curl_setopt_read(curl, smtpRead))
        set(tandem_curl_setopt_pointer(curl, CURLOPT_READDATA, box.toOpaque()))
        set(tandem_curl_setopt_long(curl, CURLOPT_UPLOAD, 1))
        set(tandem_curl_setopt_long(curl, CURLOPT_TIMEOUT, timeoutSeconds))
        set(tandem_curl_setopt_long(curl, CURLOPT_NOSIGNAL, 1))
        // STARTTLS when the server offers it; smtps:// is TLS from the start.
        set(tandem_curl_setopt_long(curl, CURLOPT_USE_SSL, Int(CURLUSESSL_TRY.rawValue)))
        if let username { set(tandem_curl_setopt_string(curl, CURLOPT_USERNAME, username)) }
        if let password { set(tandem_curl_setopt_string(curl, CURLOPT_PASSWORD, password)) }
        error.withUnsafeMutableBufferPointer { buffer in set(tandem_curl_setopt_pointer(curl, CURLOPT_ERRORBUFFER, buffer.baseAddress)) }
        if code == CURLE_OK { code = curl_easy_perform(curl) }
        guard code == CURLE_OK else {
            let detail = String(cString: error)
            throw SMTPError(message: detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail)
        }
    }
}

/// The message bytes libcurl reads, and how far it got.
final class Payload: @unchecked Sendable {
    let bytes: [UInt8]
    var offset = 0
    init(bytes: [UInt8]) { self.bytes = bytes }
}

/// libcurl's read callback: copies the next part of the message.
private func smtpRead(_ buffer: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ user: UnsafeMutableRawPointer?) -> Int {
    guard let buffer, let user else { return 0 }
    let payload = Unmanaged<Payload>.fromOpaque(user).takeUnretainedValue()
    let n = min(size * count, payload.bytes.count - payload.offset)
    guard n > 0 else { return 0 }
    payload.bytes.withUnsafeBufferPointer { source in
        UnsafeMutableRawPointer(buffer).copyMemory(from: source.baseAddress! + payload.offset, byteCount: n)
    }
    payload.offset += n
    return n
}

struct SMTPError: Error, CustomStringConvertible {
    var message: String
    var description: String { "SMTP: \(message)" }
}
