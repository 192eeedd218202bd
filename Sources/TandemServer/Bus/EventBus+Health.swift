import TandemCore
import Synchronization

extension EventBus {
    /// The bus's part of `/healthz` (issue 20 item 4; decisions N16): `{"state": S, "reconnects": N}`,
    /// where S is `"in-process"` (no `--bus`: one node), `"connected"` or `"disconnected"` (the
    /// node is reconnecting to NATS: it serves its own clients, other nodes' events do not
    /// reach it; N6), and N is `tandem_bus_reconnects_total`. Informational: `/healthz` stays
    /// 200 while the bus is down, since the node still serves (a load balancer must not take
    /// every node out when NATS restarts).
    var health: JSONValue {
        let state = transport.map { $0.isConnected ? "connected" : "disconnected" } ?? "in-process"
        return ["state": .string(state), "reconnects": .int(Int64(missed.load(ordering: .relaxed)))]
    }
}
