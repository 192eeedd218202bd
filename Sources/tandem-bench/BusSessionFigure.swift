import Dispatch
import Foundation
import TandemCore
import TandemTestSupport

/// Issue 20's group-session figures on a `BusCluster` (decisions N42): a reliable messenger
/// message's delivery to a member on another node than the sender's, beside a member on the
/// sender's node (both timed from the send, in this process's clock); and the peak fan-out of one
/// session of 32 members sending flat out (as the sessions figure measures it, unreliable
/// frames) on the node without the bus, then with its members spread over the three nodes.
enum BusSessionFigure {
    struct Results: Sendable {
        var messages: Int
        var local: BusFigure.Percentiles, remote: BusFigure.Percentiles
        var deliveredLocal: Int, deliveredRemote: Int
        var oneNodeRate: Double, spreadRate: Double
        var seconds: Double
        /// CPU seconds per delivery during each fan-out run: the servers' (the node without the
        /// bus; the three nodes and nats-server) and this process's clients'.
        var oneNodeCPU: Double, spreadCPU: Double
        var oneClientCPU: Double, spreadClientCPU: Double
    }

    static func run(cluster: BusCluster, options: BenchOptions, report: Report) throws {
        let nodes = cluster.nodes.map(\.port), single = cluster.single.port
        let account = cluster.account, member = cluster.member, size = options.size
        let spreadPIDs = cluster.nodes.map(\.pid) + (cluster.nats.processIdentifier.map { [$0] } ?? []), singlePID = cluster.single.pid
        let cpu: @Sendable (Bool) -> Double = { spread in
            (spread ? spreadPIDs : [singlePID]).map(ProcessCPU.seconds(pid:)).reduce(0, +)
        }
        let outcome = Locked<Result<Results, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            do {
                let results = try await measure(nodes: nodes, single: single, account: account, member: member, size: size, cpu: cpu)
                outcome.withLock { $0 = .success(results) }
            } catch {
                outcome.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        guard let result = try outcome.withLock({ $0 })?.get() else { throw BenchError("the session figures did not finish") }
        report.say("  reliable session message, \(result.messages) sent from node A one every 2 ms: to a member on node B "
                   + "p50 \(Format.latency(result.remote.p50)), p99 \(Format.latency(result.remote.p99)) (\(result.deliveredRemote) delivered); "
                   + "to a member on node A p50 \(Format.latency(result.local.p50)), p99 \(Format.latency(result.local.p99)) (\(result.deliveredLocal) delivered)")
        let share = result.spreadRate / max(result.oneNodeRate, 1)
        report.say("  one session of \(SessionsFigure.fanOutSize), everyone sending flat out for \(Format.seconds(result.seconds)): "
                   + "\(Format.rate(result.oneNodeRate)) deliveries on one node without the bus, \(Format.rate(result.spreadRate)) spread over "
                   + "\(nodes.count) nodes (\(Format.percent(share)))")
        // Cores busy in each run: its CPU over the seconds sending plus the one second of draining
        // that `flatOut` waits; a run near 2 is CPU-bound on this machine (decisions N53).
        let window = result.seconds + 1
        let oneCores = (result.oneNodeCPU + result.oneClientCPU) * result.oneNodeRate * result.seconds / window
        let spreadCores = (result.spreadCPU + result.spreadClientCPU) * result.spreadRate * result.seconds / window
        report.say("  CPU per delivery during the fan-out: servers \(Format.latency(result.oneNodeCPU)) on one node, "
                   + "\(Format.latency(result.spreadCPU)) over \(nodes.count) nodes and nats-server; clients (this process) "
                   + "\(Format.latency(result.oneClientCPU)) and \(Format.latency(result.spreadClientCPU)); cores busy "
                   + String(format: "%.2f and %.2f", oneCores, spreadCores))
        report.add("bus: fan-out, server CPU per delivery (3 nodes + NATS / one)", value: Format.latency(result.spreadCPU),
                   ceiling: Format.latency(result.oneNodeCPU), ratio: BusFigure.ratio(result.spreadCPU, result.oneNodeCPU),
                   target: "—", verdict: .info)
        report.add("bus: reliable session message A→B, p50/p99", value: "\(Format.latency(result.remote.p50))/\(Format.latency(result.remote.p99))",
                   ceiling: "\(Format.latency(result.local.p50))/\(Format.latency(result.local.p99))",
                   ratio: BusFigure.ratio(result.remote.p99, result.local.p99), target: "p99 < 10 ms",
                   verdict: Report.Verdict(passes: result.remote.p99 < 0.010 && result.deliveredRemote == result.messages))
        report.add("bus: fan-out, session of \(SessionsFigure.fanOutSize) over \(nodes.count) nodes / on one", value: Format.rate(result.spreadRate),
                   ceiling: Format.rate(result.oneNodeRate), ratio: Format.percent(share), target: "≥ 50%",
                   verdict: Report.Verdict(passes: share >= 0.5))
    }

    private static func measure(nodes: [Int], single: Int, account: BenchAccount, member: String, size: BenchSize,
                                cpu: @Sendable (_ spread: Bool) -> Double) async throws -> Results {
        // 1. Reliable messages: the sender and one receiver on A (the session's owner), one on B.
        let local = DeliveryStats(), remote = DeliveryStats()
        let trio = try await SessionsFigure.session(at: [nodes[0], nodes[0], nodes[1]], account: account, member: member,
                                                    reliable: true) { $0 == 2 ? remote : local }
        let messages = size.pick(full: 2000, quick: 500, smoke: 20)
        local.open(latencies: true)
        remote.open(latencies: true)
        for _ in 0..<messages {
            await trio[0].send()
            try await Task.sleep(nanoseconds: 2_000_000)
        }
        local.close()
        remote.close()
        try await Task.sleep(nanoseconds: 1_000_000_000)
        let (localLatencies, deliveredLocal) = local.state.withLock { ($0.latencies, $0.count) }
        let (remoteLatencies, deliveredRemote) = remote.state.withLock { ($0.latencies, $0.count) }
        trio.forEach { $0.stop() }

        // 2. Fan-out: 32 members on the node without the bus, then over the three nodes.
        let seconds = size.pick(full: 5.0, quick: 3.0, smoke: 1.0)
        let oneStats = DeliveryStats()
        let one = try await SessionsFigure.session(at: Array(repeating: single, count: SessionsFigure.fanOutSize), account: account,
                                                   member: member) { _ in oneStats }
        let (oneServerStart, oneClientStart) = (cpu(false), ProcessCPU.seconds(pid: getpid()))
        let oneRate = await SessionsFigure.flatOut(one, stats: oneStats, seconds: seconds)
        let oneDeliveries = max(oneRate * seconds, 1)
        let oneNodeCPU = (cpu(false) - oneServerStart) / oneDeliveries
        let oneClientCPU = (ProcessCPU.seconds(pid: getpid()) - oneClientStart) / oneDeliveries
        one.forEach { $0.stop() }
        try await Task.sleep(nanoseconds: 1_000_000_000)
        let spreadStats = DeliveryStats()
        let spread = try await SessionsFigure.session(at: (0..<SessionsFigure.fanOutSize).map { nodes[$0 % nodes.count] }, account: account,
                                                      member: member) { _ in spreadStats }
        let (spreadServerStart, spreadClientStart) = (cpu(true), ProcessCPU.seconds(pid: getpid()))
        let spreadRate = await SessionsFigure.flatOut(spread, stats: spreadStats, seconds: seconds)
        let spreadDeliveries = max(spreadRate * seconds, 1)
        let spreadCPU = (cpu(true) - spreadServerStart) / spreadDeliveries
        let spreadClientCPU = (ProcessCPU.seconds(pid: getpid()) - spreadClientStart) / spreadDeliveries
        spread.forEach { $0.stop() }
        return Results(messages: messages, local: BusFigure.Percentiles(localLatencies), remote: BusFigure.Percentiles(remoteLatencies),
                       deliveredLocal: deliveredLocal, deliveredRemote: deliveredRemote, oneNodeRate: oneRate, spreadRate: spreadRate,
                       seconds: seconds, oneNodeCPU: oneNodeCPU, spreadCPU: spreadCPU, oneClientCPU: oneClientCPU,
                       spreadClientCPU: spreadClientCPU)
    }
}
