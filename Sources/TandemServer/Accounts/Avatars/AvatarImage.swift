import TandemCore

/// What an avatar may be (decisions A48): at most 1 MiB of PNG, JPEG or WebP, the type named by
/// the request's `Content-Type` and confirmed by the file's own signature ("magic bytes"), so a
/// picture served back with its type is what it says. The image itself is not decoded.
enum AvatarImage {
    /// Largest avatar, in bytes (1 MiB).
    static let maximumBytes = 1 << 20

    /// The accepted types, as `Content-Type` names them.
    static let contentTypes = ["image/png", "image/jpeg", "image/webp"]

    /// The type `bytes` begin like: PNG's 8-byte signature, JPEG's SOI marker and the start of
    /// a marker (`FF D8 FF`), or WebP's RIFF container (`RIFF`, a size, `WEBP`); nil otherwise.
    static func detect(_ bytes: [UInt8]) -> String? {
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "image/png" }
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if bytes.count >= 12, bytes.starts(with: Array("RIFF".utf8)), Array(bytes[8..<12]) == Array("WEBP".utf8) { return "image/webp" }
        return nil
    }

    /// The image type of a request's `Content-Type` header (parameters and case ignored).
    /// - Throws: `UnsupportedMediaType` (415) for a missing or other type.
    static func declaredType(_ header: String?) throws -> String {
        let type = String((header ?? "").lowercased().prefix { $0 != ";" }.withoutSurroundingSpaces)
        guard contentTypes.contains(type) else {
            throw UnsupportedMediaType(type: type, accepted: "send the picture's bytes as image/png, image/jpeg or image/webp")
        }
        return type
    }

    /// Checks an avatar upload: its size and that its bytes are the declared type.
    /// - Throws: `LIMIT_EXCEEDED` over 1 MiB, `BAD_REQUEST` when empty or not the declared type.
    static func check(_ bytes: [UInt8], declared: String) throws {
        guard bytes.count <= maximumBytes else {
            throw CloudKitError(.limitExceeded, "an avatar may be at most \(maximumBytes) bytes (1 MiB); got \(bytes.count)")
        }
        guard !bytes.isEmpty else { throw CloudKitError.badRequest("the request needs the picture's bytes as its body") }
        guard let found = detect(bytes), found == declared else {
            throw CloudKitError.badRequest("the body is not a \(declared) image\(detect(bytes).map { " (it looks like \($0))" } ?? "")")
        }
    }
}
