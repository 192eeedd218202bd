/// A record's ancestors through `parent`, walked the same way by both stores (decisions P44).
package enum ParentChain {
    /// The parents of `name`, nearest first, at most `limit`, reading one parent at a time with
    /// `parent` (nil: no parent, or no such record). A cycle ends the walk after the first
    /// repeated name, which is included, so a caller can see the chain loops.
    package static func ancestors(of name: String, limit: Int, parent: (String) throws -> String?) rethrows -> [String] {
        var chain: [String] = []
        var seen: Set<String> = [name]
        var current = name
        while chain.count < limit, let next = try parent(current) {
            chain.append(next)
            guard seen.insert(next).inserted else { break }
            current = next
        }
        return chain
    }
}
