import Testing
import TandemCore
import TandemStore

/// Records and zones through `any Store` (decisions P5): what a stored record reads back as, the
/// zone's change sequence, scopes keeping zones apart, deletion.
@Suite struct RecordConformanceTests {
    @Test(arguments: StoreBackend.all(for: .records))
    func aRecordReadsBackAsItWasPut(backend: StoreBackend) throws {
        try backend.withStore { store in
            let fixture = try Fixture.make(store)
            let fields: [String: FieldValue] = [
                "title": .string("Groceries"), "count": .int64(-3), "ratio": .double(0.25), "due": .timestamp(1_700_000_000_123),
                "blob": .bytes([0, 1, 254, 255]), "tags": .list([.string("a"), .string("b"), .string("a")], of: .string),
                "place": .location(Location(latitude: 52.5, longitude: 13.4)),
                "owner": .reference(Reference(recordName: "other", action: .deleteSelf)),
            ]
            var record = fixture.record("note-1", fields: fields, tag: "tag-1")
            record.parent = "folder"
            let stored = record
            _ = try store.write { tx in try tx.save(stored, in: fixture.zone) }
            let read = try #require(try store.read { try $0.record(zone: fixture.zone, name: "note-1") })
            #expect(read.recordName == "note-1")
            #expect(read.recordType == "Note")
            #expect(read.recordChangeTag == "tag-1")
            #expect(read.fields == fields)
            #expect(read.parent == "folder")
            #expect(read.created == record.created)
            #expect(read.modified == record.modified)
            #expect(read.zoneID == fixture.zone.zoneID)
            let referrers = try store.read { try $0.referrers(zone: fixture.zone, recordName: "other") }
            #expect(referrers == [Referrer(recordName: "note-1", action: .deleteSelf)])
        }
    }

    /// `zoneAndRecord` reads a zone and one of its records in one statement (decisions P63): the
    /// record as `record(zone:name:)` reads it, with its membership; the zone alone when the record
    /// is missing; nil when the zone is missing or another owner's.
    @Test(arguments: StoreBackend.all(for: .records))
    func aZoneAndOneOfItsRecordsReadTogether(backend: StoreBackend) throws {
        try backend.withStore { store in
            let fixture = try Fixture.make(store)
            var record = fixture.record("n1", fields: ["title": .string("x"), "count": .int64(2)], tag: "tag-7")
            record.parent = "folder"
            let stored = record
            _ = try store.write { tx in try tx.save(stored, in: fixture.zone, membership: "share-1") }
            let both = try #require(try store.read { try $0.zoneAndRecord(fixture.scope, zoneName: "notes", recordName: "n1") })
            #expect(both.zone.key == fixture.zone.key)
            #expect(both.zone.zoneID == fixture.zone.zoneID)
            #expect(both.zone.createdAt == fixture.zone.createdAt)
            #expect(both.zone.changeSequence == fixture.zone.changeSequence + 1)
            let found = try #require(both.found)
            #expect(found.record == (try store.read { try $0.record(zone: fixture.zone, name: "n1") }))
            #expect(found.record.fields == stored.fields)
            #expect(found.record.recordChangeTag == "tag-7")
            #expect(found.record.parent == "folder")
            #expect(found.membership == "share-1")
            let zoneOnly = try #require(try store.read { try $0.zoneAndRecord(fixture.scope, zoneName: "notes", recordName: "missing") })
            #expect(zoneOnly.zone.key == fixture.zone.key)
            #expect(zoneOnly.found == nil)
            #expect(try store.read { try $0.zoneAndRecord(fixture.scope, zoneName: "other", recordName: "n1") } == nil)
            #expect(try store.read { try $0.zoneAndRecord(Fixture.scope(owner: "_someone"), zoneName: "notes", recordName: "n1") } == nil)
        }
    }

    /// P74: a write's first read also carries the etag of the zone's schema, nil before there is
    /// one, and the same as `schemaETag` after; the zone and record as `zoneAndRecord` reads them.
    @Test(arguments: StoreBackend.all(for: .records))
    func aWritesFirstReadCarriesTheSchemaETag(backend: StoreBackend) throws {
        try backend.withStore { store in
            let fixture = try Fixture.make(store)
            let read = { (name: String) in
                try store.write { tx in try tx.zoneRecordAndSchemaETag(fixture.scope, zoneName: "notes", recordName: name) }
            }
            let before = try #require(try read("n1"))
            #expect(before.schemaETag == nil)
            #expect(before.zone.key == fixture.zone.key && before.found == nil)
            try store.write { tx in
                _ = try tx.putSchema("DEFINE SCHEMA", etag: "e-17", fields: [], container: Fixture.container, environment: .development,
                                     createSortIndexes: false, at: 1_500)
                try tx.save(fixture.record("n1", fields: ["title": .string("x")]), in: fixture.zone, membership: "share-1")
            }
            let after = try #require(try read("n1"))
            #expect(after.schemaETag == "e-17")
            #expect(after.schemaETag == (try store.read { try $0.schemaETag(container: Fixture.container, environment: .development) }))
            #expect(after.found?.record.fields == ["title": .string("x")])
            #expect(after.found?.membership == "share-1")
            #expect(try read("missing")?.schemaETag == "e-17")
            #expect(try read("missing")?.found == nil)
            #expect(try store.write { tx in try tx.zoneRecordAndSchemaETag(fixture.scope, zoneName: "other", recordName: "n1") } == nil)
        }
    }

    /// A write's first read may take the zone's next change sequence early (decisions P75): the
    /// numbers the transaction's writes get are the ones they would have got, a savepoint that
    /// rolls back takes its reservation (or its use of one) back, and no number is used twice.
    @Test(arguments: StoreBackend.all(for: .records))
    func aReservingFirstReadLeavesTheChangeSequencesAsTheyWouldBe(backend: StoreBackend) throws {
        try backend.withStore { store in
            let fixture = try Fixture.make(store)
            let current = { try #require(try store.read { try $0.zone(fixture.scope, name: "notes") }).changeSequence }
            let start = try current()
            let taken = try store.write { tx in
                let read = try #require(try tx.zoneRecordAndSchemaETagReservingSequence(fixture.scope, zoneName: "notes", recordName: "n1"))
                #expect(read.zone.changeSequence == start && read.found == nil)
                return [try tx.nextChangeSequence(fixture.zone), try tx.nextChangeSequence(fixture.zone)]
            }
            #expect(taken == [start + 1, start + 2])
            #expect(try current() == start + 2)

            struct Undo: Error {}
            // Reserved inside a savepoint that rolls back: gone with it.
            let afterInner = try store.write { tx in
                _ = try? tx.savepoint {
                    _ = try tx.zoneRecordAndSchemaETagReservingSequence(fixture.scope, zoneName: "notes", recordName: "n1")
                    throw Undo()
                }
                return try tx.nextChangeSequence(fixture.zone)
            }
            #expect(afterInner == start + 3)
            // Reserved outside, used inside a savepoint that rolls back: still there to use.
            let afterUse = try store.write { tx in
                _ = try tx.zoneRecordAndSchemaETagReservingSequence(fixture.scope, zoneName: "notes", recordName: "n1")
                _ = try? tx.savepoint {
                    _ = try tx.nextChangeSequence(fixture.zone)
                    throw Undo()
                }
                return [try tx.nextChangeSequence(fixture.zone), try tx.nextChangeSequence(fixture.zone)]
            }
            #expect(afterUse == [start + 4, start + 5])
            // Reserved and never used: at most a gap, never a number again.
            try store.write { tx in
                _ = try tx.zoneRecordAndSchemaETagReservingSequence(fixture.scope, zoneName: "notes", recordName: "n1")
            }
            let next = try store.write { tx in try tx.nextChangeSequence(fixture.zone) }
            #expect(next > start + 5)
            #expect(try current() == next)
            #expect(try store.write { tx in try tx.zoneRecordAndSchemaETagReservingSequence(fixture.scope, zoneName: "other", recordName: "n1") } == nil)
        }
    }

    /// A save told the row its write's first read found (decisions P76; PostgreSQL sends it
    /// without waiting) leaves what any save leaves: the record, its index, full-text and
    /// reference rows replaced on an update, and the share it left in its logged change. The
    /// read tells a new record the key its row then gets.
    @Test(arguments: StoreBackend.all(for: .records))
    func aSaveToldTheRowItsReadFoundWritesWhatAnySaveWrites(backend: StoreBackend) throws {
        try Fixture.withSchema(backend, indexing: [IndexedField(recordType: "Note", field: "title", options: [.queryable, .searchable])]) { store, fixture in
            let indexing: [String: IndexOptions] = ["title": [.queryable, .searchable]]
            let steps: [(name: String, title: String, target: String?, membership: String?)] = [
                ("a", "first words", "t1", nil), ("b", "other", "t1", nil), ("a", "second words", "t2", "share-1"), ("a", "third words", nil, nil),
            ]
            var logged: [LoggedChange] = []
            var rows: [RowBefore?] = []
            for step in steps {
                var fields: [String: FieldValue] = ["title": .string(step.title)]
                if let target = step.target { fields["ref"] = .reference(Reference(recordName: target, action: .none)) }
                let record = fixture.record(step.name, fields: fields)
                let (changes, before) = try store.write { tx in
                    let read = try #require(try tx.zoneRecordAndSchemaETagReservingSequence(fixture.scope, zoneName: "notes", recordName: step.name))
                    let sequence = try tx.nextChangeSequence(read.zone)
                    try tx.putRecord(record, zone: read.zone, sequence: sequence, membership: step.membership, indexing: indexing, before: read.before)
                    return (tx.loggedChanges(), read.before)
                }
                logged += changes
                rows.append(before)
            }
            #expect(logged.map(\.previousMembership) == [nil, nil, nil, "share-1"])
            if backend == .postgres {
                // A new record's row takes the key its read reserved; a saved one keeps its own.
                guard case .absent(let key)? = rows[0] else { Issue.record("expected an absent row: \(String(describing: rows[0]))"); return }
                #expect(rows.dropFirst().map { $0 } == [.absent(key: rows[1]?.key ?? 0), .present(key: key, membership: nil),
                                                      .present(key: key, membership: "share-1")])
                #expect(rows[1]?.key != key)
            } else {
                #expect(rows.allSatisfy { $0 == nil })
            }
            try store.read { reader throws -> Void in
                let cases: [(Comparator, String, [String])] = [(.equals, "first words", []), (.equals, "second words", []),
                                                               (.equals, "third words", ["a"]), (.containsAllTokens, "words", ["a"]),
                                                               (.containsAllTokens, "other", ["b"])]
                for (comparator, value, expected) in cases {
                    let query = Query(recordType: "Note", filters: [Filter(comparator: comparator, field: .user("title"), value: .string(value))])
                    let found = try reader.query(query, zones: [fixture.zone], limit: 10, after: nil, memberships: nil)
                    #expect(found.map(\.record.recordName) == expected, "\(comparator) \(value)")
                }
                #expect(try reader.referrers(zone: fixture.zone, recordName: "t1").map(\.recordName) == ["b"])
                #expect(try reader.referrers(zone: fixture.zone, recordName: "t2").isEmpty)
                let a = try #require(try reader.recordWithMembership(zone: fixture.zone, name: "a"))
                #expect(a.record.fields["title"] == .string("third words") && a.membership == nil)
            }
        }
    }

    /// Without `decodeFields` (decisions E25), a lookup's and a query's record carries its stored
    /// field text and no decoded fields, the text a decoded read carries too; a record holding
    /// an asset is decoded all the same (a response adds its download URL).
    @Test(arguments: StoreBackend.all(for: .records))
    func undecodedReadsCarryTheStoredFieldText(backend: StoreBackend) throws {
        try backend.withStore { store in
            let fixture = try Fixture.make(store)
            let plain = fixture.record("plain", fields: ["title": .string("x \"quoted\""), "count": .int64(2)], tag: "t1")
            let asset = fixture.record("asset", fields: ["file": .asset(Asset(fileChecksum: "abc", size: 3))], tag: "t2")
            _ = try store.write { tx in
                try tx.save(plain, in: fixture.zone)
                try tx.save(asset, in: fixture.zone)
            }
            let decoded = try #require(try store.read { try $0.record(zone: fixture.zone, name: "plain") })
            let lookedUp = try #require(try store.read {
                try $0.zoneAndRecord(fixture.scope, zoneName: "notes", recordName: "plain", decodeFields: false)
            }?.found?.record)
            #expect(lookedUp.fields.isEmpty)
            #expect(lookedUp.encodedFields != nil && lookedUp.encodedFields == decoded.encodedFields)
            #expect(RecordCodec.encodeForResponse(lookedUp) == RecordCodec.encodeForResponse(decoded))
            let queried = try store.read {
                try $0.query(Query(recordType: "Note"), zones: [fixture.zone], limit: 10, after: nil, memberships: nil, decodeFields: false)
            }.map(\.record)
            #expect(queried.map(\.recordName).sorted() == ["asset", "plain"])
            for record in queried where record.recordName == "plain" { #expect(record.fields.isEmpty && record.encodedFields == decoded.encodedFields) }
            for record in queried where record.recordName == "asset" { #expect(record.fields == asset.fields) }
            let assetLookup = try store.read {
                try $0.zoneAndRecord(fixture.scope, zoneName: "notes", recordName: "asset", decodeFields: false)
            }?.found?.record
            #expect(assetLookup?.fields == asset.fields)
        }
    }

    @Test(arguments: StoreBackend.all(for: .records))
    func replacingARecordKeepsOnlyTheNewVersion(backend: StoreBackend) throws {
        try backend.withStore { store in
            let fixture = try Fixture.make(store)
            _ = try store.write { tx in
                try tx.save(fixture.record("n", fields: ["title": .string("old"), "ref": .reference(Reference(recordName: "a"))], tag: "1"),
                            in: fixture.zone)
            }
            _ = try store.write { tx in try tx.save(fixture.record("n", fields: ["title": .string("new")], tag: "2", at: 3_000), in: fixture.zone) }
            let read = try #require(try store.read { try $0.record(zone: fixture.zone, name: "n") })
            #expect(read.recordChangeTag == "2")
            #expect(read.fields == ["title": .string("new")])
            #expect(read.modified?.timestamp == 3_000)
            #expect(try store.read { try $0.referrers(zone: fixture.zone, recordName: "a") }.isEmpty)
        }
    }

    @Test(arguments: StoreBackend.all(for: .records))
    func theChangeSequenceCountsEveryWriteInTheZone(backend: StoreBackend) throws {
        try backend.withStore { store in
            let fixture = try Fixture.make(store)
            #expect(fixture.zone.changeSequence == 0)
            let sequences = try store.write { tx in
                [try tx.save(fixture.record("a"), in: fixture.zone), try tx.save(fixture.record("b"), in: fixture.zone),
                 try tx.remove("a", in: fixture.zone)]
            }
            #expect(sequences == [1, 2, 3])
            let zone = try #require(try store.read { try $0.zone(fixture.scope, name: "notes") })
            #expect(zone.changeSequence == 3)
            #expect(zone.key == fixture.zone.key)
        }
    }

    @Test(arguments: StoreBackend.all(for: .records))
    func deletingARecordRemovesItAndItsReferences(backend: StoreBackend) throws {
        try backend.withStore { store in
            let fixture = try Fixture.make(store)
            _ = try store.write { tx in try tx.save(fixture.record("n", fields: ["ref": .reference(Reference(recordName: "t"))]), in: fixture.zone) }
            _ = try store.write { tx in try tx.remove("n", in: fixture.zone) }
            #expect(try store.read { try $0.record(zone: fixture.zone, name: "n") } == nil)
            #expect(try store.read { try $0.referrers(zone: fixture.zone, recordName: "t") }.isEmpty)
        }
    }

    @Test(arguments: StoreBackend.all(for: .records))
    func zonesAreKeptApartByScopeAndName(backend: StoreBackend) throws {
        try backend.withStore { store in
            let fixture = try Fixture.make(store)
            let other = try store.write { tx in
                try tx.addUser(email: "other@example.com", givenName: nil, familyName: nil, phoneNumber: nil, at: 1_000)
            }
            let (again, theirs, production) = try store.write { tx in
                (try tx.ensureZone(fixture.scope, name: "notes", at: 5_000),
                 try tx.ensureZone(Fixture.scope(owner: other.recordName), name: "notes", at: 5_000),
                 try tx.ensureZone(DatabaseScope(container: Fixture.container, environment: .production, database: .private,
                                                 owner: fixture.owner.recordName), name: "notes", at: 5_000))
            }
            #expect(again == fixture.zone)
            #expect(Set([fixture.zone.key, theirs.key, production.key]).count == 3)
            _ = try store.write { tx in try tx.save(fixture.record("mine"), in: fixture.zone) }
            #expect(try store.read { try $0.record(zone: theirs, name: "mine") } == nil)
            #expect(try store.read { try $0.zones(fixture.scope) }.map(\.zoneID.zoneName) == ["notes"])
            #expect(try store.read { try $0.zone(fixture.scope, name: "absent") } == nil)
        }
    }

    @Test(arguments: StoreBackend.all(for: .records))
    func deletingAZoneTakesItsRecords(backend: StoreBackend) throws {
        try backend.withStore { store in
            let fixture = try Fixture.make(store)
            try store.write { tx in
                try tx.save(fixture.record("a"), in: fixture.zone)
                try tx.save(fixture.record("b"), in: fixture.zone)
            }
            try store.write { tx in try tx.deleteZone(fixture.zone) }
            #expect(try store.read { try $0.zone(fixture.scope, name: "notes") } == nil)
            // A zone made again under the same name starts empty, at sequence 0.
            let fresh = try store.write { tx in try tx.ensureZone(fixture.scope, name: "notes", at: 9_000) }
            #expect(fresh.changeSequence == 0)
            #expect(try store.read { try $0.record(zone: fresh, name: "a") } == nil)
            #expect(try store.read { try $0.query(Query(recordType: "Note"), zones: [fresh], limit: 10, after: nil, memberships: nil) }.isEmpty)
        }
    }

    @Test(arguments: StoreBackend.all(for: .accounts))
    func containersUsersAndTokens(backend: StoreBackend) throws {
        try backend.withStore { store in
            let fixture = try Fixture.make(store)
            #expect(try store.read { try $0.containerExists(Fixture.container) })
            #expect(try !store.read { try $0.containerExists("iCloud.absent") })
            #expect(try !store.write { try $0.createContainer(Fixture.container, at: 2_000) })
            #expect(try store.read { try $0.user(recordNameOrEmail: "owner@example.com") }?.recordName == fixture.owner.recordName)
            #expect(try store.read { try $0.user(recordNameOrEmail: fixture.owner.recordName) }?.email == "owner@example.com")
            let hash = [UInt8](repeating: 7, count: 32)
            try store.write { tx in
                try tx.addToken(hash: hash, grant: TokenGrant(kind: .user, user: fixture.owner, container: nil), at: 2_000)
            }
            let grant = try #require(try store.read { try $0.grant(forTokenHash: hash) })
            #expect(grant.kind == .user)
            #expect(grant.user?.recordName == fixture.owner.recordName)
            #expect(try store.read { try $0.grant(forTokenHash: [UInt8](repeating: 8, count: 32)) } == nil)
        }
    }
}
