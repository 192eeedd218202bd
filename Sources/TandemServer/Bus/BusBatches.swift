import Foundation

/// How queued events share bus messages (decisions N49). One event travels as its JSON object,
/// as before; several consecutive events for one subject travel as one JSON array of them,
/// `[e1,e2,…]`, behind one MAC. The events' order inside and across messages is the order they
/// were published, so one publisher's order still holds on the bus (N5, N20).
enum BusBatches {
    /// One message to send: `subject`, its unsealed JSON (`json`), and how many events it carries.
    struct Batch: Equatable {
        var subject: String
        var json: [UInt8]
        var events: Int
    }

    /// `queued` (subject, JSON of one event), in publish order, as messages: each run of
    /// consecutive events for one subject joined while the JSON stays within `limit` bytes; an
    /// event alone is sent as it is. Every event is in exactly one batch, in its order.
    static func group(_ queued: [(subject: String, json: [UInt8])], limit: Int) -> [Batch] {
        var batches: [Batch] = []
        var run: [[UInt8]] = [], runSubject = "", runBytes = 1
        func close() {
            guard !run.isEmpty else { return }
            if run.count == 1 {
                batches.append(Batch(subject: runSubject, json: run[0], events: 1))
            } else {
                var json: [UInt8] = [UInt8(ascii: "[")]
                json.reserveCapacity(runBytes)
                for (index, event) in run.enumerated() {
                    if index > 0 { json.append(UInt8(ascii: ",")) }
                    json += event
                }
                json.append(UInt8(ascii: "]"))
                batches.append(Batch(subject: runSubject, json: json, events: run.count))
            }
            run = []
            runBytes = 1
        }
        for (subject, json) in queued {
            // "[" + events joined by "," + "]": each event adds its bytes and one separator.
            if !run.isEmpty, subject != runSubject || runBytes + json.count + 1 > limit { close() }
            run.append(json)
            runSubject = subject
            runBytes += json.count + 1
        }
        close()
        return batches
    }

    /// The events of one message's JSON (without its MAC): an array is a batch, an object one event.
    /// - Throws: `DecodingError` when it is neither.
    static func decode(_ json: ArraySlice<UInt8>) throws -> [BusEvent] {
        // A session's deliveries and requests, the bulk of the traffic, without Codable (N60).
        if let events = BusFastCodec.decode(json) { return events }
        let data = Data(json)
        if json.first == UInt8(ascii: "[") { return try JSONDecoder().decode([BusEvent].self, from: data) }
        return [try JSONDecoder().decode(BusEvent.self, from: data)]
    }
}
