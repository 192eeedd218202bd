/// The built-in substitution variables (spec §2.3 rule 7).
///
/// `$(alpha)`, `$(upper)`, `$(lower)`, `$(alnum)`, `$(digit)`, `$(xdigit)` each match one ASCII
/// character of their C `ctype` class (C locale). `$(lang)` matches one ISO language code and
/// `$(region)` one ISO region code, as Foundation's `Locale` lists them (`ISOCodes`).
/// A custom variable of the same name takes precedence over a built-in one.
public enum SubstitutionVariables {
    /// The names of the built-in variables.
    public static let builtInNames: Set<String> = ["alpha", "upper", "lower", "alnum", "digit", "xdigit", "lang", "region"]
}

/// A one-character class of a built-in variable.
enum CharacterClass: Hashable {
    case alpha, upper, lower, alnum, digit, xdigit

    init?(name: String) {
        switch name {
        case "alpha": self = .alpha
        case "upper": self = .upper
        case "lower": self = .lower
        case "alnum": self = .alnum
        case "digit": self = .digit
        case "xdigit": self = .xdigit
        default: return nil
        }
    }

    /// Under case-insensitive matching the input is lowercased, so `upper` and `lower` both
    /// mean any letter: `caseSensitive` applies to variables too (spec §2.3 rule 7).
    func folded() -> CharacterClass {
        self == .upper || self == .lower ? .alpha : self
    }

    @inline(__always)
    func contains(_ unit: UInt32) -> Bool {
        let isUpper = unit >= 0x41 && unit <= 0x5A
        let isLower = unit >= 0x61 && unit <= 0x7A
        let isDigit = unit >= 0x30 && unit <= 0x39
        switch self {
        case .alpha: return isUpper || isLower
        case .upper: return isUpper
        case .lower: return isLower
        case .alnum: return isUpper || isLower || isDigit
        case .digit: return isDigit
        case .xdigit: return isDigit || (unit >= 0x41 && unit <= 0x46) || (unit >= 0x61 && unit <= 0x66)
        }
    }
}
