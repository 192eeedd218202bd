/// One piece of a pattern as written (spec §2.3 rules 2 and 7).
enum PatternToken: Hashable {
    case literal(UInt32)
    /// `?`: exactly one character.
    case one
    /// `*`: zero or more characters, crossing `/`. `?*` is `.one` then `.star`: at least one.
    case star
    /// `$(name)`: a substitution variable.
    case variable(String)
}

enum PatternSyntax {
    /// Splits a pattern into tokens. `$(` without a closing `)`, or with `$`/`(` inside, is literal
    /// text. With `variables: false` (legacy `paths`, variable values) `$(…)` is literal too.
    static func tokens(_ pattern: String, variables: Bool = true) -> [PatternToken] {
        let scalars = Array(pattern.unicodeScalars)
        var tokens: [PatternToken] = []
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            switch scalar {
            case "*": tokens.append(.star)
            case "?": tokens.append(.one)
            case "$" where variables && index + 1 < scalars.count && scalars[index + 1] == "(":
                var end = index + 2
                while end < scalars.count, !"$()".unicodeScalars.contains(scalars[end]) { end += 1 }
                if end < scalars.count, scalars[end] == ")" {
                    var name = String.UnicodeScalarView()
                    name.append(contentsOf: scalars[(index + 2)..<end])
                    tokens.append(.variable(String(name)))
                    index = end
                } else {
                    tokens.append(.literal(scalar.value))
                }
            default: tokens.append(.literal(scalar.value))
            }
            index += 1
        }
        return tokens
    }

    /// Lowercases one code point for case-insensitive matching (ASCII fast; other scripts by
    /// their simple lowercase mapping).
    @inline(__always)
    static func fold(_ unit: UInt32) -> UInt32 {
        if unit < 0x80 { return (unit >= 0x41 && unit <= 0x5A) ? unit + 0x20 : unit }
        guard let scalar = Unicode.Scalar(unit) else { return unit }
        let lower = scalar.properties.lowercaseMapping.unicodeScalars
        return lower.count == 1 ? lower.first!.value : unit
    }
}
