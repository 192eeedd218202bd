import Foundation
import TandemCore

/// The bus's two busiest events, a session's `deliver` and `request` (every messenger frame of
/// a session spread over nodes is one of each), written with `JSONWriter` and read with
/// `JSONParser` instead of `JSONEncoder` and `JSONDecoder` (decisions N60).
///
/// The JSON is the value `JSONEncoder` writes for them (its spelling of `/`, of numbers and its
/// key order apart): `{"origin":…,"body":{"session":{"_0":{"container":…,"environment":…,
/// "kind":{"deliver":{…}}}}},"sentAt":…}`, optionals left out when nil, bytes in base64. So a
/// node of either kind reads the other's messages, and
/// every other event, or a message these functions do not recognise, still goes through
/// Codable. With the lock that sleeps (E32), Codable's encode and decode of these two events
/// were nearly half of a bus node's busy CPU in the fan-out figure.
enum BusFastCodec {
    /// The JSON of `event` when it is a session's `deliver` or `request`; nil for any other event
    /// (and for a connection number past `Int64.max`, which `JSONValue` cannot hold).
    static func encode(_ event: BusEvent) -> [UInt8]? {
        guard case .session(let traffic) = event.body, let kind = kind(traffic.kind) else { return nil }
        let fields: JSONObject = ["container": .string(traffic.container), "environment": .string(traffic.environment), "kind": kind]
        var object: JSONObject = ["origin": .string(event.origin), "body": .object(["session": .object(["_0": .object(fields)])])]
        if let sentAt = event.sentAt, sentAt.isFinite { object["sentAt"] = .double(sentAt) } else if event.sentAt != nil { return nil }
        return JSONWriter.bytes(.object(object))
    }

    /// The events of one message's JSON (an array is a batch) when every one is a session's
    /// `deliver` or `request` as `encode` writes it; nil sends the message to `JSONDecoder`.
    static func decode(_ json: ArraySlice<UInt8>) -> [BusEvent]? {
        // Both writers put `origin` first and `body` next, so another event's message is told
        // apart by its first bytes and is not parsed twice.
        guard json.prefix(sessionMarkerWindow).firstRange(of: sessionMarker) != nil,
              let value = try? JSONParser.parse(Array(json)) else { return nil }
        if case .array(let items) = value {
            var events: [BusEvent] = []
            events.reserveCapacity(items.count)
            for item in items {
                guard let event = event(item) else { return nil }
                events.append(event)
            }
            return events
        }
        return event(value).map { [$0] }
    }

    /// What every message of a session event holds near its start, as both writers write it.
    private static let sessionMarker = Array(#""body":{"session":{"_0":"#.utf8)
    /// How far into a message `sessionMarker` is looked for: past a long node name, not much further.
    private static let sessionMarkerWindow = 512

    private static func kind(_ kind: SessionTraffic.Kind) -> JSONValue? {
        switch kind {
        case .deliver(let receivers, let text, let binary, let droppable):
            var nodes = JSONObject()
            for (node, connections) in receivers {
                guard let numbers = numbers(connections) else { return nil }
                nodes[node] = .array(numbers)
            }
            var fields: JSONObject = ["receivers": .object(nodes)]
            if let text { fields["text"] = .string(text) }
            if let binary { fields["binary"] = .string(binary.base64EncodedString()) }
            fields["droppable"] = .bool(droppable)
            return .object(["deliver": .object(fields)])
        case .request(let owner, let connection, let user, let declared, let envelope, let frame):
            guard connection <= UInt64(Int64.max) else { return nil }
            var fields: JSONObject = ["owner": .string(owner), "connection": .int(Int64(connection)), "user": .string(user),
                                      "declared": .array(declared.map(JSONValue.string))]
            if let envelope { fields["envelope"] = .string(envelope) }
            if let frame { fields["frame"] = .string(frame.base64EncodedString()) }
            return .object(["request": .object(fields)])
        default:
            return nil
        }
    }

    private static func numbers(_ connections: [UInt64]) -> [JSONValue]? {
        var numbers: [JSONValue] = []
        numbers.reserveCapacity(connections.count)
        for connection in connections {
            guard connection <= UInt64(Int64.max) else { return nil }
            numbers.append(.int(Int64(connection)))
        }
        return numbers
    }

    private static func event(_ value: JSONValue) -> BusEvent? {
        guard let object = value.objectValue, let origin = object["origin"]?.stringValue,
              let body = object["body"]?.objectValue, body.count == 1, let session = body["session"]?.objectValue, session.count == 1,
              let traffic = session["_0"]?.objectValue, let container = traffic["container"]?.stringValue,
              let environment = traffic["environment"]?.stringValue, let kinds = traffic["kind"]?.objectValue, kinds.count == 1,
              let (name, fields) = kinds.entries.first.map({ ($0.key, $0.value) }), let fields = fields.objectValue else { return nil }
        var sentAt: Double?
        if let stamp = object["sentAt"], !stamp.isNull {
            guard let seconds = stamp.doubleValue else { return nil }
            sentAt = seconds
        }
        let kind: SessionTraffic.Kind
        switch name {
        case "deliver":
            guard let nodes = fields["receivers"]?.objectValue, let droppable = fields["droppable"]?.boolValue,
                  let text = optionalString(fields["text"]), let binary = optionalBytes(fields["binary"]) else { return nil }
            var receivers: [String: [UInt64]] = [:]
            for (node, list) in nodes.entries {
                guard let items = list.arrayValue else { return nil }
                var connections: [UInt64] = []
                connections.reserveCapacity(items.count)
                for item in items {
                    guard case .int(let number) = item, number >= 0 else { return nil }
                    connections.append(UInt64(number))
                }
                receivers[node] = connections
            }
            kind = .deliver(receivers: receivers, text: text, binary: binary, droppable: droppable)
        case "request":
            guard let owner = fields["owner"]?.stringValue, case .int(let connection)? = fields["connection"], connection >= 0,
                  let user = fields["user"]?.stringValue, let items = fields["declared"]?.arrayValue,
                  let envelope = optionalString(fields["envelope"]), let frame = optionalBytes(fields["frame"]) else { return nil }
            var declared: [String] = []
            for item in items {
                guard let conversation = item.stringValue else { return nil }
                declared.append(conversation)
            }
            kind = .request(owner: owner, connection: UInt64(connection), user: user, declared: declared,
                            envelope: envelope, frame: frame)
        default:
            return nil
        }
        return BusEvent(origin: origin, body: .session(SessionTraffic(container: container, environment: environment, kind: kind)),
                        sentAt: sentAt)
    }

    /// An optional string member: absent or null is `.some(nil)`; anything but a string is nil (not ours).
    private static func optionalString(_ value: JSONValue?) -> String?? {
        guard let value, !value.isNull else { return .some(nil) }
        return value.stringValue.map { .some($0) }
    }

    /// An optional base64 member, as `JSONEncoder` writes `Data`: absent or null is `.some(nil)`.
    private static func optionalBytes(_ value: JSONValue?) -> Data?? {
        guard let value, !value.isNull else { return .some(nil) }
        return value.stringValue.flatMap { Data(base64Encoded: $0) }.map { .some($0) }
    }
}
