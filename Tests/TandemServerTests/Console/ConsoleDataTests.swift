import Foundation
import Testing
import TandemCore
import TandemTestSupport

/// The console's data browser (issue 18 item 3; decisions C20–C23) over real HTTP: queries with
/// filters, sorts and paging; a record with typed fields, references, assets and its change log;
/// create, update (change tag checked) and delete; bad input refused beside its field with
/// nothing written. Records are made and checked through the records API as the test user
/// (`ada@example.com`), whose databases the administrator opens in the console.
@Suite struct ConsoleDataTests {
    static let base = "/console/containers/\(TestServer.container)/data/development"

    /// The page's query for the test user's private database, zone `zone`, type `Note`.
    static func selection(_ zone: String) -> String { "database=private&user=ada%40example.com&zone=\(zone)&type=Note" }

    /// Record names in the page's results table, in order.
    static func names(_ html: String) -> [String] {
        guard let table = html.range(of: "<table id=\"records\"") else { return [] }
        let pattern = try! NSRegularExpression(pattern: #"&amp;name=[^"]*">([^<]+)</a>"#)
        let text = String(html[table.lowerBound...])
        return pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)).map { String(text[Range($0.range(at: 1), in: text)!]) }
    }

    static func lookup(_ server: TestServer, _ name: String, zone: String) throws -> JSONValue {
        try server.post("records/lookup", Body.lookup([name], zone: zone)).json.record(0)
    }

    @Test func queriesTakeEveryKindOfFilterSortsAndPages() throws {
        let server = try ConsoleTests.server
        let console = try ConsoleTests.admin()
        let zone = try server.makeZone("data")
        for n in 1...5 {
            try server.create("note-\(n)", fields: ["n": Body.field(.int(Int64(n)), "INT64"), "title": Body.field(.string("Note \(n)")),
                                                    "tags": Body.field(.array([.string(n % 2 == 0 ? "even" : "odd"), "all"]), "STRING_LIST")], zone: zone)
        }
        let query = Self.base + "?" + Self.selection(zone)
        // GREATER_THAN_OR_EQUALS with a descending sort, two a page, then the next page by its link.
        let first = try console.get(query + "&field1=n&comparator1=GREATER_THAN_OR_EQUALS&valueType1=INT64&value1=2&sort1=n&order1=descending&limit=2")
        #expect(first.status == 200, "\(first.text)")
        #expect(Self.names(first.text) == ["note-5", "note-4"], "\(first.text)")
        let next = try #require(first.text.range(of: #"id="next-page" href="([^"]+)""#, options: .regularExpression).map { String(first.text[$0]) })
        let href = String(next.dropFirst(#"id="next-page" href=""#.count).dropLast()).replacingOccurrences(of: "&amp;", with: "&")
        let second = try console.get(href)
        #expect(Self.names(second.text) == ["note-3", "note-2"], "\(second.text)")
        // A list comparator, a list field, a prefix, a negation.
        #expect(Self.names(try console.get(query + "&field1=n&comparator1=IN&valueType1=INT64&value1=1,3&sort1=n").text) == ["note-1", "note-3"])
        #expect(Self.names(try console.get(query + "&field1=tags&comparator1=LIST_CONTAINS&valueType1=STRING&value1=even&sort1=n").text) == ["note-2", "note-4"])
        #expect(Self.names(try console.get(query + "&field1=title&comparator1=BEGINS_WITH&value1=Note%205").text) == ["note-5"])
        #expect(Self.names(try console.get(query + "&field1=n&comparator1=NOT_EQUALS&valueType1=INT64&value1=1&field2=___recordID&comparator2=NOT_IN&value2=note-2,note-3&sort1=n").text)
                == ["note-4", "note-5"])

        // Bad input: beside its field, 400.
        let badValue = try console.get(query + "&field1=n&comparator1=EQUALS&valueType1=INT64&value1=many")
        #expect(badValue.status == 400 && badValue.text.contains("id=\"field-field1-error\""), "\(badValue.text)")
        let badNear = try console.get(query + "&field1=n&comparator1=NEAR&value1=1,2")
        #expect(badNear.status == 400 && badNear.text.contains("NEAR takes"), "\(badNear.text)")
        let badLimit = try console.get(query + "&limit=500")
        #expect(badLimit.status == 400 && badLimit.text.contains("id=\"field-limit-error\""))
        let nobody = try console.get(Self.base + "?database=private&user=nobody%40example.com&type=Note")
        #expect(nobody.status == 400 && nobody.text.contains("id=\"field-user-error\""), "\(nobody.text)")
        let noZone = try console.get(Self.base + "?database=private&user=ada%40example.com&zone=missing&type=Note")
        #expect(noZone.status == 404 && noZone.text.contains("id=\"field-zone-error\""), "\(noZone.text)")
        let badMarker = try console.get(query + "&marker=not-a-marker")
        #expect(badMarker.status == 400 && badMarker.text.contains("id=\"query-error\""), "\(badMarker.text)")
    }

    @Test func theConsoleSeesOnlyWhatTheChosenAccountMaySee() throws {
        let server = try ConsoleTests.server
        let console = try ConsoleTests.admin()
        let zone = try server.makeZone("own")
        try server.create("mine", fields: ["title": Body.field("private")], zone: zone)
        // Another account's shared database holds no zone of Ada's it was not given.
        let other = "\(unique("other"))@example.com".lowercased()
        try TestServer.admin(["user", "add", "--email", other, "--data", server.dataDirectory])
        let shared = try console.get(Self.base + "?database=shared&user=\(other.replacingOccurrences(of: "@", with: "%40"))&owner=ada%40example.com&zone=\(zone)&type=Note")
        #expect(shared.status == 404 && shared.text.contains("id=\"field-zone-error\"") && !shared.text.contains("mine"), "\(shared.text)")
        let record = try console.get(Self.base + "/record?database=shared&user=\(other.replacingOccurrences(of: "@", with: "%40"))&owner=ada%40example.com&zone=\(zone)&name=mine")
        #expect(record.status == 404 && !record.text.contains("private"), "\(record.text)")
        // The public database has no zone but the default one.
        let publicZone = try console.get(Self.base + "?database=public&zone=\(zone)&type=Note")
        #expect(publicZone.status == 400 && publicZone.text.contains("only the default zone"), "\(publicZone.text)")
    }

    @Test func aParticipantsSharedDatabaseShowsTheSharedZoneAndRefusesWritesItMayNotMake() throws {
        let server = try ConsoleTests.server
        let console = try ConsoleTests.admin()
        let owner = try server.person("owner")
        let reader = try server.person("reader")
        let note = try server.shareNote(owner: owner, publicPermission: "READ_ONLY")
        try server.accept(note, as: reader)
        let user = reader.email.replacingOccurrences(of: "@", with: "%40")
        // No owner named yet: refused beside the field, with the shared zones to pick from.
        let pick = try console.get(Self.base + "?database=shared&user=\(user)&type=Note")
        #expect(pick.status == 400 && pick.text.contains("id=\"field-owner-error\"") && pick.text.contains("\(note.zone) of \(owner.recordName)</a>"), "\(pick.text)")
        let shared = "database=shared&user=\(user)&owner=\(owner.recordName)&zone=\(note.zone)&type=Note"
        let page = try console.get(Self.base + "?" + shared + "&sort1=___recordID")
        #expect(Self.names(page.text) == ["child", "note"], "\(page.text)")
        // A read-only participant cannot change the record, so neither can the console acting as one.
        let refused = try console.post(Self.base + "/record", ["database": "shared", "user": reader.email, "owner": owner.recordName, "zone": note.zone,
                                                               "name": "note", "tag": note.rootTag, "type": "Note", "rows": "1",
                                                               "name0": "title", "existing0": "yes", "type0": "STRING", "value0": "Changed"])
        #expect(refused.status == 403 && refused.text.contains("Nothing was saved"), "\(refused.status) \(refused.text)")
        let stored = try server.sharedLookup(note, ["note"], as: reader).json.record(0)
        #expect(stored["fields"]?["title"]?["value"] == "Groceries" && stored["recordChangeTag"]?.stringValue == note.rootTag)
    }

    @Test func aRecordShowsTypedFieldsReferencesAssetsAndItsChangeLog() throws {
        let server = try ConsoleTests.server
        let console = try ConsoleTests.admin()
        let zone = try server.makeZone("view")
        try server.create("target", fields: ["title": Body.field("the target")], zone: zone)
        let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 0, count: 24))
        let receipt = try AssetDownloadURLTests().upload(server, png)
        try server.create("viewed", type: "Photo", fields: [
            "link": ["value": ["recordName": "target", "action": "DELETE_SELF"], "type": "REFERENCE"],
            "at": Body.field(.int(1_764_734_706_789), "TIMESTAMP"), "place": ["value": ["latitude": 38.7, "longitude": -9.1], "type": "LOCATION"],
            "photo": Body.field(receipt, "ASSET"), "lines": Body.field(["one", "two"], "STRING_LIST"),
        ], zone: zone)
        let page = try console.get(Self.base + "/record?" + Self.selection(zone) + "&name=viewed")
        #expect(page.status == 200, "\(page.text)")
        #expect(page.text.contains("&amp;name=target\">target</a> (DELETE_SELF)"), "a reference links to its target: \(page.text)")
        #expect(page.text.contains("2025-12-03T04:05:06.789Z") && page.text.contains("38.7, -9.1") && page.text.contains("one<br>two"))
        #expect(page.text.contains("<table id=\"change-log\"") && page.text.contains("saved (its latest change)"))
        // The asset's link is the signed download URL for the acting account, and serves the bytes.
        let link = try #require(page.text.range(of: #"class="asset" href="([^"]+)""#, options: .regularExpression).map { String(page.text[$0]) })
        let url = String(link.dropFirst(#"class="asset" href=""#.count).dropLast()).replacingOccurrences(of: "&amp;", with: "&")
        #expect(url.hasPrefix("/assets/1/") && url.contains("&r=\(server.userRecordName)&"), "\(url)")
        let bytes = try server.request("GET", server.baseURL + url, token: .some(nil))
        #expect(bytes.status == 200 && bytes.body == png)
        #expect(page.text.contains("<img class=\"asset-preview\" src=\"\(url.replacingOccurrences(of: "&", with: "&amp;"))\""))

        // A deleted record leaves its tombstone in the change log.
        #expect(try server.post("records/modify", Body.modify([Body.operation("forceDelete", name: "target", recordType: nil)], zone: zone)).status == 200)
        let gone = try console.get(Self.base + "/record?" + Self.selection(zone) + "&name=target")
        #expect(gone.status == 200 && gone.text.contains("id=\"tombstone\"") && gone.text.contains("<td>deleted</td>"), "\(gone.text)")
        #expect(try console.get(Self.base + "/record?" + Self.selection(zone) + "&name=never").status == 404)
    }

    /// C65: the server previews an asset only when its stored bytes are an image; any other
    /// asset (here HTML) gets its download link alone, with no script deciding.
    @Test func onlyAnImageAssetIsPreviewed() throws {
        let server = try ConsoleTests.server
        let console = try ConsoleTests.admin()
        let zone = try server.makeZone("previews")
        let gif = Data(Array("GIF89a".utf8) + Array(repeating: 0, count: 20))
        let html = Data("<!doctype html><p>not a picture</p>".utf8)
        try server.create("both", type: "Photo", fields: [
            "picture": Body.field(try AssetDownloadURLTests().upload(server, gif), "ASSET"),
            "page": Body.field(try AssetDownloadURLTests().upload(server, html), "ASSET"),
        ], zone: zone)
        let page = try console.get(Self.base + "/record?" + Self.selection(zone) + "&name=both")
        #expect(page.status == 200, "\(page.text)")
        let cells = page.text.components(separatedBy: "<tr>")
        let picture = try #require(cells.first { $0.contains("<code>picture</code>") })
        let other = try #require(cells.first { $0.contains("<code>page</code>") })
        #expect(picture.contains("<img class=\"asset-preview\"") && picture.contains("class=\"asset\" href="), "\(picture)")
        #expect(!other.contains("<img") && other.contains("class=\"asset\" href="), "\(other)")
    }

    /// What a browser submits for a `<textarea>` whose HTML is `html`'s element `id`: the
    /// parser drops one line break after the opening tag, character references are decoded, and
    /// form encoding sends every line break as CR LF (HTML's form submission).
    static func submitted(_ html: String, textarea id: String) -> String? {
        guard let open = html.range(of: "id=\"\(id)\""), let start = html[open.upperBound...].range(of: ">"),
              let end = html[start.upperBound...].range(of: "</textarea>") else { return nil }
        var text = String(html[start.upperBound..<end.lowerBound])
        if text.hasPrefix("\n") { text.removeFirst() }
        for (reference, character) in [("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&#39;", "'"), ("&amp;", "&")] {
            text = text.replacingOccurrences(of: reference, with: character)
        }
        return text.replacingOccurrences(of: "\n", with: "\r\n")
    }

    /// Saving a record's page unchanged leaves its values as they were: a STRING that starts
    /// with a line break keeps it, its LF line breaks do not come back as the browser's CR LF,
    /// a list keeps its empty items (C32). A changed STRING is saved with LF line breaks.
    @Test func savingAPageUnchangedKeepsLineBreaksAsStored() throws {
        let server = try ConsoleTests.server
        let console = try ConsoleTests.admin()
        let zone = try server.makeZone("lines")
        let stored = "\nfirst line\nsecond line"
        try server.create("lines", fields: ["title": Body.field(.string(stored))], zone: zone)
        let page = try console.get(Self.base + "/record?" + Self.selection(zone) + "&name=lines")
        let typed = try #require(Self.submitted(page.text, textarea: "field-value0"), "\(page.text)")
        let tag = try #require(Self.lookup(server, "lines", zone: zone)["recordChangeTag"]?.stringValue)
        let selection = ["database": "private", "user": "ada@example.com", "zone": zone, "name": "lines", "tag": tag, "type": "Note", "rows": "1",
                         "name0": "title", "existing0": "yes", "type0": "STRING"]
        let saved = try console.post(Self.base + "/record", selection.merging(["value0": typed]) { $1 })
        #expect(saved.status == 303, "\(saved.text)")
        let record = try Self.lookup(server, "lines", zone: zone)
        #expect(record["fields"]?["title"]?["value"]?.stringValue == stored, "\(record)")

        // A list's empty item has no line of its own to come back on.
        let items: JSONValue = ["a", "", "b"]
        try server.create("items", fields: ["tags": Body.field(items, "STRING_LIST")], zone: zone)
        let listPage = try console.get(Self.base + "/record?" + Self.selection(zone) + "&name=items")
        let listText = try #require(Self.submitted(listPage.text, textarea: "field-value0"), "\(listPage.text)")
        let listTag = try #require(Self.lookup(server, "items", zone: zone)["recordChangeTag"]?.stringValue)
        let listSaved = try console.post(Self.base + "/record", selection.merging([
            "name": "items", "tag": listTag, "name0": "tags", "type0": "STRING_LIST", "value0": listText]) { $1 })
        #expect(listSaved.status == 303, "\(listSaved.text)")
        #expect(try Self.lookup(server, "items", zone: zone)["fields"]?["tags"]?["value"] == items)

        let newTag = try #require(record["recordChangeTag"]?.stringValue)
        let changed = try console.post(Self.base + "/record", selection.merging(["tag": newTag, "value0": "one\r\ntwo"]) { $1 })
        #expect(changed.status == 303, "\(changed.text)")
        #expect(try Self.lookup(server, "lines", zone: zone)["fields"]?["title"]?["value"]?.stringValue == "one\ntwo")
    }

    @Test func recordsAreCreatedUpdatedWithTheirChangeTagAndDeletedAndBadInputSavesNothing() throws {
        let server = try ConsoleTests.server
        let console = try ConsoleTests.admin()
        let zone = try server.makeZone("edit")
        let selection = ["database": "private", "user": "ada@example.com", "zone": zone]
        let created = try console.post(Self.base + "/record", selection.merging([
            "name": "made", "type": "Note", "rows": "3",
            "name0": "title", "type0": "STRING", "value0": "Made in the console",
            "name1": "count", "type1": "INT64", "value1": "7",
            "name2": "when", "type2": "TIMESTAMP", "value2": "2026-12-03T04:05:06Z",
        ]) { $1 })
        #expect(created.status == 303 && created.headers["location"]?.contains("name=made&done=saved") == true, "\(created.status) \(created.text)")
        var record = try Self.lookup(server, "made", zone: zone)
        #expect(record["fields"]?["count"] == Body.field(.int(7), "INT64"), "\(record)")
        #expect(record["fields"]?["when"]?["value"] == .int(1_796_270_706_000))
        let tag = try #require(record["recordChangeTag"]?.stringValue)
        #expect(record["created"]?["userRecordName"]?.stringValue == server.userRecordName, "the console wrote as the chosen account")

        // A bad value: nothing saved, the reason beside the row, the typed text kept.
        let bad = try console.post(Self.base + "/record", selection.merging([
            "name": "made", "tag": tag, "type": "Note", "rows": "2", "name0": "title", "existing0": "yes", "type0": "STRING", "value0": "Changed",
            "name1": "count", "existing1": "yes", "type1": "INT64", "value1": "seven",
        ]) { $1 })
        #expect(bad.status == 400 && bad.text.contains("id=\"field-value1-error\"") && bad.text.contains(">\nseven</textarea>"), "\(bad.text)")
        #expect(try Self.lookup(server, "made", zone: zone)["recordChangeTag"]?.stringValue == tag, "nothing was half-saved")

        let updated = try console.post(Self.base + "/record", selection.merging([
            "name": "made", "tag": tag, "type": "Note", "rows": "3", "name0": "title", "existing0": "yes", "type0": "STRING", "value0": "Changed",
            "name1": "count", "existing1": "yes", "type1": "INT64", "value1": "7", "remove1": "yes",
            "name2": "tags", "type2": "STRING_LIST", "value2": "a\nb\n",
        ]) { $1 })
        #expect(updated.status == 303, "\(updated.text)")
        record = try Self.lookup(server, "made", zone: zone)
        #expect(record["fields"]?["title"]?["value"] == "Changed" && record["fields"]?["count"] == nil
                && record["fields"]?["tags"]?["value"] == ["a", "b"], "\(record)")
        let fresh = try #require(record["recordChangeTag"]?.stringValue)

        // The old change tag: a conflict, and the record stays as it is.
        let stale = try console.post(Self.base + "/record", selection.merging([
            "name": "made", "tag": tag, "type": "Note", "rows": "1", "name0": "title", "existing0": "yes", "type0": "STRING", "value0": "Lost update",
        ]) { $1 })
        #expect(stale.status == 409 && stale.text.contains("the record changed since this page was read"), "\(stale.text)")
        #expect(try Self.lookup(server, "made", zone: zone)["fields"]?["title"]?["value"] == "Changed")
        let staleDelete = try console.post(Self.base + "/record/delete", selection.merging(["name": "made", "tag": tag]) { $1 })
        #expect(staleDelete.status == 409, "\(staleDelete.text)")
        #expect(try Self.lookup(server, "made", zone: zone)["recordChangeTag"]?.stringValue == fresh)

        let deleted = try console.post(Self.base + "/record/delete", selection.merging(["name": "made", "tag": fresh]) { $1 })
        #expect(deleted.status == 303 && deleted.headers["location"]?.hasSuffix("done=deleted") == true, "\(deleted.text)")
        #expect(try Self.lookup(server, "made", zone: zone)["serverErrorCode"]?.stringValue == "NOT_FOUND")

        // A bad field name or an unknown account refuses the form; a new record's errors keep the form.
        let badName = try console.post(Self.base + "/record", selection.merging(["type": "Note", "rows": "1", "name0": "9lives", "type0": "STRING", "value0": "x"]) { $1 })
        #expect(badName.status == 400 && badName.text.contains("a field name is a letter"), "\(badName.text)")
        let nobody = try console.post(Self.base + "/record", ["database": "private", "user": "nobody@example.com", "type": "Note", "rows": "0"])
        #expect(nobody.status == 400 && nobody.text.contains("no account"), "\(nobody.text)")
        #expect(try server.sqlite("SELECT count(*) FROM records WHERE name = 'made'") == "0")
    }
}
