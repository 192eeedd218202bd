/// An option set whose members are `.ckdb` keywords (`FieldOptions`, `Rights`).
public protocol KeywordOptionSet: OptionSet where Element == Self {
    /// Every member with its keyword, in the order the printer writes them.
    static var keywords: [(member: Self, keyword: String)] { get }
}

extension KeywordOptionSet {
    /// The keywords of the members present, in printing order (`["QUERYABLE", "SORTABLE"]`).
    public var names: [String] {
        Self.keywords.filter { contains($0.member) }.map(\.keyword)
    }
}
