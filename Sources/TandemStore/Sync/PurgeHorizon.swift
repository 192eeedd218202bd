/// Where purging leaves each zone's feed: the highest sequence purged per zone, which becomes
/// the zone's `purged_seq` (a client whose token is older must start over), the same for both
/// stores (decisions P44).
package enum PurgeHorizon {
    /// The highest purged sequence of each zone among `removed`, pairs of (zone key, sequence).
    package static func perZone(_ removed: [(Int64, Int64)]) -> [Int64: Int64] {
        var horizon: [Int64: Int64] = [:]
        for (zone, sequence) in removed { horizon[zone] = max(horizon[zone] ?? 0, sequence) }
        return horizon
    }
}
