/// How a shared zone's viewers changed: who lost access (each gets an `ACCESS_LOST` row in
/// their database feed) and who gained it, the same for both stores (decisions P44).
package struct ZoneViewerChange {
    /// Viewers who are no longer accepted participants, sorted.
    package let departed: [String]
    /// Accepted participants who were not viewers yet, sorted.
    package let arrived: [String]

    package init(previous: some Sequence<String>, current: some Sequence<String>) {
        let previous = Set(previous), current = Set(current)
        departed = previous.subtracting(current).sorted()
        arrived = current.subtracting(previous).sorted()
    }
}
