extension Schema {
    /// Parses `.ckdb` text (CloudKit schema language, spec §5.2).
    ///
    /// `file` only labels errors. Throws the first `SchemaError`: a syntax error with
    /// `expected`/`found`, or a broken rule (duplicate names, unknown roles and system
    /// fields, options a type cannot have), each at its line and column.
    public init(parsing text: String, file: String = "<schema>") throws(SchemaError) {
        var parser = try Parser(text, file: file)
        self = try parser.schema()
    }
}
