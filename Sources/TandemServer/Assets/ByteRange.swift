/// A `range` request header for one representation of `size` bytes (RFC 9110 §14: single
/// `bytes=` ranges `a-b`, `a-` and `-n`). A header this does not understand — another unit,
/// several ranges, a malformed or backwards range — is ignored and the whole body is sent, as
/// the RFC allows.
enum ByteRange: Equatable {
    case whole
    case part(Range<Int>)
    case unsatisfiable

    static func parse(_ header: String?, size: Int) -> ByteRange {
        guard let header, header.hasPrefix("bytes="), !header.contains(",") else { return .whole }
        let spec = header.dropFirst("bytes=".count).filter { $0 != " " }
        guard let dash = spec.firstIndex(of: "-") else { return .whole }
        let first = spec[..<dash], last = spec[spec.index(after: dash)...]
        let isDigits = { (text: Substring) in !text.isEmpty && text.allSatisfy { $0.isASCII && $0.isNumber } }
        if first.isEmpty {
            guard isDigits(last), let suffix = Int(last) else { return .whole }
            guard suffix > 0, size > 0 else { return .unsatisfiable }
            return .part(max(0, size - suffix)..<size)
        }
        guard isDigits(first), let start = Int(first) else { return .whole }
        var end = size - 1
        if !last.isEmpty {
            guard isDigits(last), let given = Int(last) else { return .whole }
            guard given >= start else { return .whole }
            end = min(given, size - 1)
        }
        guard start < size else { return .unsatisfiable }
        return .part(start..<(end + 1))
    }
}
