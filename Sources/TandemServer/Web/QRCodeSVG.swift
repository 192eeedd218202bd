import CQREncode

/// A QR code of a short text as inline SVG, for pages that show a link to scan (the activity
/// invitation page, decisions R38). The symbol comes from libqrencode (Debian `libqrencode4`):
/// 8-bit mode, error correction level M (about 15% of the symbol may be damaged), the smallest
/// version that holds the text. The SVG draws one dark square per module on a white background
/// with the standard quiet zone of 4 modules; `viewBox` is in modules, so the page sizes it.
/// It is drawn with presentation attributes only (no `style`), so a page whose content security
/// policy allows no inline style shows it.
enum QRCodeSVG {
    /// Modules of white around the symbol (ISO/IEC 18004: at least 4).
    static let quietZone = 4

    /// The SVG element for `text`, or nil when libqrencode cannot encode it (longer than a
    /// version 40 symbol holds at level M, 2,331 bytes, or out of memory).
    static func svg(for text: String, label: String) -> String? {
        guard let code = text.withCString({ QRcode_encodeString8bit($0, 0, QR_ECLEVEL_M) }) else { return nil }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        let modules = UnsafeBufferPointer(start: code.pointee.data, count: width * width)
        var path = ""
        for y in 0..<width {
            for x in 0..<width where modules[y * width + x] & 1 == 1 {   // bit 0: dark module
                path += "M\(x + quietZone) \(y + quietZone)h1v1h-1z"
            }
        }
        let size = width + 2 * quietZone
        return "<svg id=\"qr\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(size) \(size)\" width=\"\(size * 6)\" height=\"\(size * 6)\""
            + " role=\"img\" aria-label=\"\(label)\" shape-rendering=\"crispEdges\">"
            + "<rect width=\"\(size)\" height=\"\(size)\" fill=\"#fff\"/><path fill=\"#000\" d=\"\(path)\"/></svg>"
    }
}
