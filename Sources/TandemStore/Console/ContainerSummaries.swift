extension ContainerSummary {
    /// The console's container list (`ConsoleReading.containers`) from the two facts both stores
    /// read: each container, and the zone count of each container and environment. Containers
    /// keep the order given; one without zones has an empty `zones`.
    package static func list(containers: [(id: String, createdAt: Int64)],
                             zoneCounts: [(container: String, environment: String, count: Int)]) -> [ContainerSummary] {
        var zones: [String: [String: Int]] = [:]
        for entry in zoneCounts { zones[entry.container, default: [:]][entry.environment] = entry.count }
        return containers.map { ContainerSummary(id: $0.id, createdAt: $0.createdAt, zones: zones[$0.id] ?? [:]) }
    }
}
