import Foundation
import Testing
import TandemCore

/// records/query: every comparator, system fields, sorts, zoneWide and paging
/// (CloudKit Web Services: records/query and the Filter dictionary).
@Suite struct QueryTests {
    /// A zone of five Item records with every kind of field.
    static func seed(_ server: TestServer) throws -> String {
        let zone = try server.makeZone("query")
        let items: [(String, JSONObject)] = [
            ("i1", ["name": Body.field("Apple pie"), "n": Body.field(1), "price": Body.field(1.5), "when": Body.field(.int(1000), "TIMESTAMP"),
                    "tags": Body.field(["red", "sweet"]), "where": Body.field(["latitude": 48.8566, "longitude": 2.3522], "LOCATION"),
                    "owner": Body.field(["recordName": "alice", "action": "NONE"], "REFERENCE")]),
            ("i2", ["name": Body.field("Banana bread"), "n": Body.field(2), "price": Body.field(2.5), "when": Body.field(.int(2000), "TIMESTAMP"),
                    "tags": Body.field(["yellow", "sweet"]), "where": Body.field(["latitude": 48.8606, "longitude": 2.3376], "LOCATION"),
                    "owner": Body.field(["recordName": "bob", "action": "NONE"], "REFERENCE")]),
            ("i3", ["name": Body.field("Cherry tart"), "n": Body.field(3), "price": Body.field(3.5), "when": Body.field(.int(3000), "TIMESTAMP"),
                    "tags": Body.field(["red"]), "where": Body.field(["latitude": 51.5074, "longitude": -0.1278], "LOCATION"),
                    "owner": Body.field(["recordName": "alice", "action": "NONE"], "REFERENCE")]),
            ("i4", ["name": Body.field("apple juice"), "n": Body.field(4), "tags": Body.field([], "STRING_LIST")]),
            ("i5", ["n": Body.field(5)]),
        ]
        let operations = items.map { Body.operation("create", name: $0.0, recordType: "Item", fields: $0.1) }
        let response = try server.post("records/modify", Body.modify(operations, zone: zone))
        guard response.json.records.allSatisfy({ $0.serverErrorCode == nil }) else { throw TestFailure(response.text) }
        _ = try server.create("other", type: "Other", fields: ["n": Body.field(1)], zone: zone)
        return zone
    }

    func names(_ server: TestServer, zone: String, filters: [JSONValue], sorts: [JSONValue] = []) throws -> [String] {
        let response = try server.post("records/query", ["zoneID": ["zoneName": .string(zone)],
                                                          "query": ["recordType": "Item", "filterBy": .array(filters), "sortBy": .array(sorts)]])
        guard response.status == 200 else { throw TestFailure("\(response.status) \(response.text)") }
        return response.json.records.compactMap { $0["recordName"]?.stringValue }
    }

    static func filter(_ comparator: String, _ field: String, _ value: JSONValue, type: String? = nil, distance: Double? = nil) -> JSONValue {
        var o: JSONObject = ["comparator": .string(comparator), "fieldName": .string(field), "fieldValue": Body.field(value, type)]
        if let distance { o["distance"] = .double(distance) }
        return .object(o)
    }

    static let comparatorCases: [(String, JSONValue, [String])] = [
        ("EQUALS", filter("EQUALS", "n", 2), ["i2"]),
        ("EQUALS string", filter("EQUALS", "name", "Cherry tart"), ["i3"]),
        ("EQUALS timestamp", filter("EQUALS", "when", .int(2000), type: "TIMESTAMP"), ["i2"]),
        ("EQUALS reference", filter("EQUALS", "owner", ["recordName": "alice"], type: "REFERENCE"), ["i1", "i3"]),
        ("NOT_EQUALS", filter("NOT_EQUALS", "n", 2), ["i1", "i3", "i4", "i5"]),
        ("LESS_THAN", filter("LESS_THAN", "n", 3), ["i1", "i2"]),
        ("LESS_THAN_OR_EQUALS", filter("LESS_THAN_OR_EQUALS", "price", 2.5), ["i1", "i2"]),
        ("GREATER_THAN", filter("GREATER_THAN", "when", .int(1500), type: "TIMESTAMP"), ["i2", "i3"]),
        ("GREATER_THAN_OR_EQUALS", filter("GREATER_THAN_OR_EQUALS", "n", 4), ["i4", "i5"]),
        ("LESS_THAN string", filter("LESS_THAN", "name", "C"), ["i1", "i2"]),
        ("IN", filter("IN", "n", [.int(1), .int(5), .int(9)], type: "INT64_LIST"), ["i1", "i5"]),
        ("NOT_IN", filter("NOT_IN", "n", [.int(1), .int(5)], type: "INT64_LIST"), ["i2", "i3", "i4"]),
        ("IN doubles", filter("IN", "price", [.double(1.5), .double(3.5)], type: "DOUBLE_LIST"), ["i1", "i3"]),
        ("IN strings", filter("IN", "name", ["Apple pie", "Cherry tart", "none"], type: "STRING_LIST"), ["i1", "i3"]),
        ("NOT_IN strings", filter("NOT_IN", "name", ["Apple pie"], type: "STRING_LIST"), ["i2", "i3", "i4"]),
        ("IN record names", filter("IN", "___recordID", [["recordName": "i2"], ["recordName": "i5"]], type: "REFERENCE_LIST"), ["i2", "i5"]),
        ("BEGINS_WITH", filter("BEGINS_WITH", "name", "Ba"), ["i2"]),
        ("BEGINS_WITH is case-sensitive", filter("BEGINS_WITH", "name", "apple"), ["i4"]),
        ("NOT_BEGINS_WITH", filter("NOT_BEGINS_WITH", "name", "Ba"), ["i1", "i3", "i4"]),
        ("CONTAINS_ALL_TOKENS", filter("CONTAINS_ALL_TOKENS", "name", "APPLE pie"), ["i1"]),
        ("CONTAINS_ANY_TOKENS", filter("CONTAINS_ANY_TOKENS", "name", "apple tart"), ["i1", "i3", "i4"]),
        ("LIST_CONTAINS", filter("LIST_CONTAINS", "tags", "red"), ["i1", "i3"]),
        ("NOT_LIST_CONTAINS", filter("NOT_LIST_CONTAINS", "tags", "red"), ["i2", "i4"]),
        ("LIST_CONTAINS_ALL", filter("LIST_CONTAINS_ALL", "tags", ["red", "sweet"], type: "STRING_LIST"), ["i1"]),
        ("NOT_LIST_CONTAINS_ALL", filter("NOT_LIST_CONTAINS_ALL", "tags", ["red", "sweet"], type: "STRING_LIST"), ["i2", "i3", "i4"]),
        ("LIST_CONTAINS_ALL of nothing", filter("LIST_CONTAINS_ALL", "tags", [], type: "STRING_LIST"), ["i1", "i2", "i3", "i4"]),
        ("NOT_LIST_CONTAINS_ALL of nothing", filter("NOT_LIST_CONTAINS_ALL", "tags", [], type: "STRING_LIST"), []),
        ("NOT_LIST_CONTAINS_ANY", filter("NOT_LIST_CONTAINS_ANY", "tags", ["red", "yellow"], type: "STRING_LIST"), ["i4"]),
        ("LIST_MEMBER_BEGINS_WITH", filter("LIST_MEMBER_BEGINS_WITH", "tags", "ye"), ["i2"]),
        ("NOT_LIST_MEMBER_BEGINS_WITH", filter("NOT_LIST_MEMBER_BEGINS_WITH", "tags", "sw"), ["i3", "i4"]),
        ("NEAR", filter("NEAR", "where", ["latitude": 48.8584, "longitude": 2.2945], type: "LOCATION", distance: 10_000), ["i1", "i2"]),
        ("NEAR small radius", filter("NEAR", "where", ["latitude": 48.8566, "longitude": 2.3522], type: "LOCATION", distance: 100), ["i1"]),
    ]

    @Test(arguments: comparatorCases.map(\.0))
    func comparatorSelectsExactlyTheMatchingRecords(label: String) throws {
        let server = try Shared.server
        let zone = try Self.seed(server)
        let (_, filter, expected) = Self.comparatorCases.first { $0.0 == label }!
        #expect(try names(server, zone: zone, filters: [filter]) == expected)
    }

    @Test func filtersCombineWithAnd() throws {
        let server = try Shared.server
        let zone = try Self.seed(server)
        let result = try names(server, zone: zone, filters: [Self.filter("LIST_CONTAINS", "tags", "sweet"), Self.filter("GREATER_THAN", "n", 1)])
        #expect(result == ["i2"])
    }

    @Test func sortsByFieldAndDistance() throws {
        let server = try Shared.server
        let zone = try Self.seed(server)
        #expect(try names(server, zone: zone, filters: [], sorts: [["fieldName": "n", "ascending": false]]) == ["i5", "i4", "i3", "i2", "i1"])
        let byDistance = try names(server, zone: zone, filters: [Self.filter("LESS_THAN", "n", 4)],
                                   sorts: [["fieldName": "where", "relativeLocation": ["latitude": 51.5, "longitude": -0.12]]])
        #expect(byDistance == ["i3", "i2", "i1"])
    }

    @Test func systemFieldsFilterAndSort() throws {
        let server = try Shared.server
        let zone = try Self.seed(server)
        let byName = try names(server, zone: zone, filters: [["comparator": "EQUALS", "systemFieldName": "recordName", "fieldValue": ["value": ["recordName": "i3"]]]])
        #expect(byName == ["i3"])
        let schemaName = try names(server, zone: zone, filters: [["comparator": "IN", "fieldName": "___recordID", "fieldValue": ["value": ["i1", "i2"], "type": "STRING_LIST"]]])
        #expect(schemaName == ["i1", "i2"])
        let creator = try names(server, zone: zone, filters: [["comparator": "EQUALS", "systemFieldName": "createdUserRecordName",
                                                                "fieldValue": ["value": .string(server.userRecordName)]]])
        #expect(creator.count == 5)
        let newest = try names(server, zone: zone, filters: [], sorts: [["systemFieldName": "recordName", "ascending": false]])
        #expect(newest == ["i5", "i4", "i3", "i2", "i1"])
        let since = try names(server, zone: zone, filters: [["comparator": "GREATER_THAN", "systemFieldName": "modifiedTimestamp", "fieldValue": ["value": 0, "type": "TIMESTAMP"]]])
        #expect(since.count == 5)
    }

    @Test func zoneWideSearchesEveryZone() throws {
        let server = try Shared.server
        let type = "Wide" + String(UUID().uuidString.prefix(6)).filter(\.isLetter)
        let zoneA = try server.makeZone("wa"), zoneB = try server.makeZone("wb")
        try server.create("one", type: type, fields: [:], zone: zoneA)
        try server.create("two", type: type, fields: [:], zone: zoneB)
        let response = try server.post("records/query", ["zoneWide": true, "query": ["recordType": .string(type)]])
        let found = response.json.records.map { "\($0["zoneID"]?["zoneName"]?.stringValue ?? "")/\($0["recordName"]?.stringValue ?? "")" }
        #expect(Set(found) == ["\(zoneA)/one", "\(zoneB)/two"])
    }

    @Test func pagesThrough450RecordsWithContinuationMarkers() throws {
        let server = try Shared.server
        let zone = try server.makeZone("paging")
        for batch in 0..<3 {
            let operations = (0..<150).map { i in Body.operation("create", name: String(format: "p%03d", batch * 150 + i), recordType: "Page", fields: ["i": Body.field(.int(Int64(batch * 150 + i)))]) }
            let response = try server.post("records/modify", Body.modify(operations, zone: zone))
            #expect(response.json.records.allSatisfy { $0.serverErrorCode == nil })
        }
        var seen: [Int64] = []
        var marker: JSONValue = .null
        var pages = 0
        repeat {
            var body: JSONObject = ["zoneID": ["zoneName": .string(zone)], "resultsLimit": 200,
                                    "query": ["recordType": "Page", "sortBy": [["fieldName": "i"]]]]
            if !marker.isNull { body["continuationMarker"] = marker }
            let response = try server.post("records/query", .object(body))
            #expect(response.status == 200)
            seen += response.json.records.compactMap { $0["fields"]?["i"]?["value"]?.int64Value }
            marker = response.json["continuationMarker"] ?? .null
            pages += 1
        } while !marker.isNull && pages < 10
        #expect(pages == 3)
        #expect(seen == Array(0..<450))
    }

    @Test func continuationMarkerOfAnotherQueryIsRefused() throws {
        let server = try Shared.server
        let zone = try Self.seed(server)
        let first = try server.post("records/query", ["zoneID": ["zoneName": .string(zone)], "resultsLimit": 2, "query": ["recordType": "Item"]])
        let marker = try #require(first.json["continuationMarker"])
        let other = try server.post("records/query", ["zoneID": ["zoneName": .string(zone)], "continuationMarker": marker, "query": ["recordType": "Other"]])
        #expect(other.status == 400)
        let forged = try server.post("records/query", ["zoneID": ["zoneName": .string(zone)], "continuationMarker": "AAAA", "query": ["recordType": "Item"]])
        #expect(forged.status == 400)
    }

    @Test func aMarkerFitsTheSameQueryHoweverItIsSpelled() throws {
        let server = try Shared.server
        _ = try server.post("records/modify", Body.modify((1...3).map { i in
            Body.operation("create", name: "spelled-\(i)", recordType: "Spelled", fields: ["i": Body.field(.int(Int64(i)))]) }))
        let page = try server.post("records/query", ["resultsLimit": 1, "query": [
            "recordType": "Spelled", "sortBy": [["fieldName": "i"]], "filterBy": [
                ["fieldName": "i", "comparator": "GREATER_THAN", "fieldValue": ["value": 0, "type": "INT64"]]]]])
        let marker = try #require(page.json["continuationMarker"])
        // Keys in another order, the default sort direction written out, the default zone named.
        let respelled = try server.post("records/query", ["continuationMarker": marker, "zoneID": ["zoneName": "_defaultZone"], "query": [
            "filterBy": [["fieldValue": ["type": "INT64", "value": 0], "comparator": "GREATER_THAN", "fieldName": "i"]],
            "sortBy": [["ascending": true, "fieldName": "i"]], "recordType": "Spelled"], "resultsLimit": 1])
        #expect(respelled.status == 200, "\(respelled.text)")
        #expect(respelled.json.records.first?["recordName"]?.stringValue == "spelled-2")
    }

    /// Pages of `size` through Page records (field `i`), sorted by `sorts`; `between` runs after the first page.
    func pageThrough(_ server: TestServer, zone: String, size: Int, sorts: [JSONValue], between: ([Int64]) throws -> Void = { _ in }) throws -> [Int64] {
        var seen: [Int64] = []
        var marker: JSONValue = .null
        var pages = 0
        repeat {
            var body: JSONObject = ["zoneID": ["zoneName": .string(zone)], "resultsLimit": .int(Int64(size)),
                                    "query": ["recordType": "Page", "sortBy": .array(sorts)]]
            if !marker.isNull { body["continuationMarker"] = marker }
            let response = try server.post("records/query", .object(body))
            guard response.status == 200 else { throw TestFailure("\(response.status) \(response.text)") }
            seen += response.json.records.compactMap { $0["fields"]?["i"]?["value"]?.int64Value }
            marker = response.json["continuationMarker"] ?? .null
            if pages == 0 { try between(seen) }
            pages += 1
        } while !marker.isNull && pages < 20
        return seen
    }

    func makePages(_ server: TestServer, _ values: [Int]) throws -> String {
        let zone = try server.makeZone("keyset")
        let operations = values.map { Body.operation("create", name: "p\($0)", recordType: "Page", fields: ["i": Body.field(.int(Int64($0)))]) }
        let response = try server.post("records/modify", Body.modify(operations, zone: zone))
        guard response.json.records.allSatisfy({ $0.serverErrorCode == nil }) else { throw TestFailure(response.text) }
        return zone
    }

    static let pagingOrders: [(String, [JSONValue])] = [
        ("record order", []),
        ("ascending field", [["fieldName": "i"]]),
        ("descending field", [["fieldName": "i", "ascending": false]]),
        ("record name", [["systemFieldName": "recordName"]]),
    ]

    /// Issue 14 item 6: with an offset marker, deleting a record of a page already returned made
    /// the next page skip one the client never saw.
    @Test(arguments: pagingOrders.map(\.0))
    func deletingFromAReturnedPageSkipsNothing(order: String) throws {
        let server = try Shared.server
        let values = Array(10..<30)
        let zone = try makePages(server, values)
        let sorts = Self.pagingOrders.first { $0.0 == order }!.1
        var firstPage: [Int64] = []
        let seen = try pageThrough(server, zone: zone, size: 5, sorts: sorts) { page in
            firstPage = page
            let doomed = try #require(page.dropFirst().first)
            let response = try server.post("records/modify", Body.modify([["operationType": "forceDelete", "record": ["recordName": .string("p\(doomed)")]]], zone: zone))
            #expect(response.status == 200)
        }
        let whole = try pageThrough(server, zone: zone, size: 200, sorts: sorts)
        #expect(seen.count == values.count, "every record once: \(seen)")
        #expect(Set(seen) == Set(values.map(Int64.init)))
        #expect(Array(seen.dropFirst(5)) == whole.filter { !firstPage.contains($0) })
    }

    /// ... and an insert before the marker returned a record twice.
    @Test(arguments: pagingOrders.map(\.0).filter { $0 != "record order" })
    func insertingBeforeTheMarkerDuplicatesNothing(order: String) throws {
        let server = try Shared.server
        let values = Array(stride(from: 10, to: 50, by: 2))
        let zone = try makePages(server, values)
        let sorts = Self.pagingOrders.first { $0.0 == order }!.1
        let seen = try pageThrough(server, zone: zone, size: 5, sorts: sorts) { _ in
            // Records that sort before everything returned so far, in each order.
            let operations = [9, 99, 11].map { Body.operation("create", name: $0 == 99 ? "a99" : "p0\($0)", recordType: "Page", fields: ["i": Body.field(.int(Int64($0)))]) }
            let response = try server.post("records/modify", Body.modify(operations, zone: zone))
            #expect(response.json.records.allSatisfy { $0.serverErrorCode == nil })
        }
        #expect(Set(seen).count == seen.count, "no record twice: \(seen)")
        #expect(Set(values.map(Int64.init)).isSubset(of: Set(seen)))
    }

    /// The store binds texts and integers of a list as JSON; values JSON would not carry exactly
    /// through SQLite 3.40 (a double its decimal parser rounds differently, a text holding NUL)
    /// still match exactly.
    @Test func inListsMatchValuesJSONWouldChange() throws {
        let server = try Shared.server
        let zone = try server.makeZone("exact")
        let odd = 0.1 + 0.2
        _ = try server.create("odd", type: "Odd", fields: ["x": Body.field(.double(odd)), "s": Body.field("a\u{0}b")], zone: zone)
        _ = try server.create("even", type: "Odd", fields: ["x": Body.field(.double(0.3)), "s": Body.field("a")], zone: zone)
        func query(_ filter: JSONValue) throws -> [String] {
            let response = try server.post("records/query", ["zoneID": ["zoneName": .string(zone)], "query": ["recordType": "Odd", "filterBy": [filter]]])
            guard response.status == 200 else { throw TestFailure("\(response.status) \(response.text)") }
            return response.json.records.compactMap { $0["recordName"]?.stringValue }
        }
        #expect(try query(Self.filter("IN", "x", [.double(odd), .double(7)], type: "DOUBLE_LIST")) == ["odd"])
        #expect(try query(Self.filter("IN", "s", ["a\u{0}b", "z"], type: "STRING_LIST")) == ["odd"])
        #expect(try query(Self.filter("NOT_IN", "s", ["a\u{0}b"], type: "STRING_LIST")) == ["even"])
        #expect(try query(Self.filter("IN", "s", ["a"], type: "STRING_LIST")) == ["even"])
    }

    @Test func valueListsPastTheLimitAreBadRequests() throws {
        let server = try Shared.server
        let zone = try Self.seed(server)
        for (count, status) in [(Limits.valuesPerFilter, 200), (Limits.valuesPerFilter + 1, 400)] {
            for comparator in ["IN", "NOT_IN"] {
                let values: JSONValue = .array((0..<count).map { JSONValue.int(Int64($0)) })
                let response = try server.post("records/query", ["zoneID": ["zoneName": .string(zone)],
                                                                 "query": ["recordType": "Item", "filterBy": [Self.filter(comparator, "n", values, type: "INT64_LIST")]]])
                #expect(response.status == status, "\(comparator) of \(count): \(response.text.prefix(200))")
                if status == 400 {
                    #expect(response.json.serverErrorCode == "BAD_REQUEST")
                    #expect(response.json["reason"]?.stringValue?.contains("at most \(Limits.valuesPerFilter) values") == true)
                }
            }
        }
    }

    @Test func valueListsPastTheQuerysTotalAreBadRequests() throws {
        let server = try Shared.server
        let zone = try Self.seed(server)
        let values: JSONValue = .array((0..<Limits.valuesPerFilter).map { JSONValue.int(Int64($0)) })
        for (filters, status) in [(Limits.valuesPerQuery / Limits.valuesPerFilter, 200), (Limits.valuesPerQuery / Limits.valuesPerFilter + 1, 400)] {
            let filterBy: JSONValue = .array(Array(repeating: Self.filter("NOT_IN", "n", values, type: "INT64_LIST"), count: filters))
            let response = try server.post("records/query", ["zoneID": ["zoneName": .string(zone)], "query": ["recordType": "Item", "filterBy": filterBy]])
            #expect(response.status == status, "\(filters) lists: \(response.text.prefix(200))")
            if status == 400 {
                #expect(response.json["reason"]?.stringValue?.contains("at most \(Limits.valuesPerQuery) list values in all") == true)
            }
        }
    }

    static let badQueries: [(String, JSONValue)] = [
        ("unknown comparator", ["recordType": "Item", "filterBy": [["comparator": "LIKE", "fieldName": "n", "fieldValue": ["value": 1]]]]),
        ("NEAR without distance", ["recordType": "Item", "filterBy": [["comparator": "NEAR", "fieldName": "where", "fieldValue": ["value": ["latitude": 1.0, "longitude": 1.0]]]]]),
        ("missing recordType", ["filterBy": []]),
        ("unknown system field", ["recordType": "Item", "filterBy": [["comparator": "EQUALS", "systemFieldName": "color", "fieldValue": ["value": 1]]]]),
        ("BEGINS_WITH on a number", ["recordType": "Item", "filterBy": [["comparator": "BEGINS_WITH", "fieldName": "n", "fieldValue": ["value": 1]]]]),
    ]

    @Test(arguments: badQueries.map(\.0))
    func malformedQueriesAreBadRequests(label: String) throws {
        let server = try Shared.server
        let query = Self.badQueries.first { $0.0 == label }!.1
        let response = try server.post("records/query", ["query": query])
        #expect(response.status == 400)
        #expect(response.json.serverErrorCode == "BAD_REQUEST")
    }

    @Test func oversizedQueriesAreLimitExceeded() throws {
        let server = try Shared.server
        let manyFilters: JSONValue = .array((0..<65).map { _ in Self.filter("EQUALS", "n", 1) })
        let tooMany = try server.post("records/query", ["query": ["recordType": "Item", "filterBy": manyFilters]])
        #expect(tooMany.status == 413)
        #expect(tooMany.json.serverErrorCode == "LIMIT_EXCEEDED")
        let values: JSONValue = .array((0..<1000).map { JSONValue.string("v\($0)") })
        let bigAll = try server.post("records/query", ["query": ["recordType": "Item", "filterBy": [Self.filter("LIST_CONTAINS_ALL", "tags", values, type: "STRING_LIST")]]])
        #expect(bigAll.status == 413)
        let manyAll: JSONValue = .array((0..<5).map { _ in Self.filter("LIST_CONTAINS_ALL", "tags", .array((0..<50).map { JSONValue.string("v\($0)") }), type: "STRING_LIST") })
        let spread = try server.post("records/query", ["query": ["recordType": "Item", "filterBy": manyAll]])
        #expect(spread.status == 413, "values are counted across filters: \(spread.text)")
        let location = try server.post("records/query", ["query": ["recordType": "Item", "filterBy": [Self.filter("EQUALS", "where", ["latitude": 1.0, "longitude": 1.0], type: "LOCATION")]]])
        #expect(location.status == 400)
    }
}
