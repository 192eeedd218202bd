/// Header fields of a request or response, looked up case-insensitively.
///
/// Fields keep their order. Names coming from the server side are lower-case, because
/// libwebsockets lower-cases every header name while parsing; lookups ignore ASCII case, so
/// `headers["Content-Type"]` and `headers["content-type"]` find the same field.
///
/// ```swift
/// let headers = HTTPHeaders([("Content-Type", "application/json")])
/// headers["content-type"]   // "application/json"
/// ```
///
/// A header that arrived several times is delivered by libwebsockets as one field whose values
/// are joined with "," (HTTP list syntax); `cookie` fragments are concatenated without a
/// separator (libwebsockets 4.1 behaviour).
public struct HTTPHeaders: Sendable, Sequence {
    /// The fields in order, names as given.
    public private(set) var fields: [(name: String, value: String)]

    /// Headers with the given (name, value) pairs, in order.
    public init(_ fields: [(String, String)] = []) {
        self.fields = fields.map { (name: $0.0, value: $0.1) }
    }

    /// Adopts already labelled fields without copying them (request heads, per request).
    init(fields: [(name: String, value: String)]) {
        self.fields = fields
    }

    /// The value of the first field called `name` (ASCII case-insensitive), or `nil`.
    public subscript(name: String) -> String? {
        // By index, lengths first: no copy of a field (two retains and releases) for the many
        // whose name has another length (a lookup asks about 57 times, decisions E29).
        let length = name.utf8.count
        for index in fields.indices where fields[index].name.utf8.count == length {
            if Self.namesMatch(fields[index].name, name) { return fields[index].value }
        }
        return nil
    }

    /// Every value of the fields called `name`, in order.
    public func values(for name: String) -> [String] {
        fields.filter { Self.namesMatch($0.name, name) }.map(\.value)
    }

    /// Appends a field; an existing field with the same name is kept.
    public mutating func add(name: String, value: String) {
        fields.append((name: name, value: value))
    }

    /// The number of fields.
    public var count: Int { fields.count }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> {
        fields.makeIterator()
    }

    /// Compares two header names ignoring ASCII case, without allocating.
    static func namesMatch(_ lhs: String, _ rhs: String) -> Bool {
        guard lhs.utf8.count == rhs.utf8.count else { return false }
        var left = lhs.utf8.makeIterator()
        var right = rhs.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil):
                return true
            case let (l?, r?):
                if l == r { continue }
                if asciiLower(l) != asciiLower(r) { return false }
            default:
                return false
            }
        }
    }

    private static func asciiLower(_ byte: UInt8) -> UInt8 {
        (byte >= 65 && byte <= 90) ? byte + 32 : byte
    }
}
