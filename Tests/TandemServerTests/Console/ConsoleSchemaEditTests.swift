import Foundation
import Synchronization
import Testing
import TandemCore
import TandemTestSupport

/// Editing a development schema in the console (issue 18 item 2; decisions C34–C39) over real
/// HTTP: every form's change lands in the store as the same `.ckdb` import would leave it; bad
/// input is refused beside its form with the import's own reason and nothing is stored;
/// data-losing changes need their box; production changes only by deploying.
@Suite struct ConsoleSchemaEditTests {
    static let start = """
        DEFINE SCHEMA
          CREATE ROLE editor;
          RECORD TYPE Note (
            title STRING QUERYABLE,
            count INT64,
            GRANT READ TO "_world"
          );
        """

    /// This suite's own server: its schema imports and index builds would otherwise share a
    /// database with ConsoleTests, whose `sqlite` updates then wait on them.
    private static let lazy = LazyTestServer(arguments: TestServer.cheapHash)

    /// A new container whose development schema is `start`, and a console signed in to it.
    static func container() throws -> (console: ConsoleClient, id: String, base: String) {
        let console = try ConsoleTests.admin(on: lazy.server)
        let id = "iCloud.com.example.\(unique("edit"))"
        try TestServer.admin(["container", "create", id, "--data", console.server.dataDirectory])
        let base = "/console/containers/\(id)/schema"
        try console.get(base + "/development/ckdb")
        let imported = try console.post(base + "/development/ckdb", ["ckdb": start])
        guard imported.status == 200 else { throw TestFailure("import: \(imported.status) \(imported.text)") }
        return (console, id, base)
    }

    /// The environment's schema as `tandem schema export` prints it.
    static func stored(_ server: TestServer, _ id: String, _ environment: String = "development") throws -> String {
        let run = try server.command(["schema", "export", "--container", id, "--environment", environment], input: "")
        guard run.status == 0 else { throw TestFailure("schema export: \(run.status) \(run.errors)") }
        return run.output
    }

    @Test func eachFormChangesTheSchemaAsTheImportWould() throws {
        let (console, id, base) = try Self.container()
        let edit = base + "/development/edit"
        let steps: [[String: String]] = [
            ["form": "type-add", "change": "type-add", "type": "Trip"],
            ["form": "type1-field-add", "change": "field-add", "type": "Trip", "field": "title", "fieldType": "STRING", "queryable": "yes", "sortable": "yes"],
            ["form": "type1-field-add", "change": "field-add", "type": "Trip", "field": "tags", "fieldType": "STRING", "list": "yes", "searchable": "yes"],
            ["form": "type1-field-add", "change": "field-add", "type": "Trip", "field": "secret", "fieldType": "ENCRYPTED STRING"],
            ["form": "type1-field-add", "change": "field-add", "type": "Trip", "field": "stops", "fieldType": "LOCATION", "list": "yes"],
            ["form": "type1-field0-indexes", "change": "field-indexes", "type": "Trip", "field": "___recordID", "queryable": "yes"],
            ["form": "type0-field1-indexes", "change": "field-indexes", "type": "Note", "field": "count", "sortable": "yes"],
            ["form": "role-add", "change": "role-add", "role": "planner"],
            ["form": "type1-grant", "change": "grant-set", "type": "Trip", "role": "planner", "read": "yes", "write": "yes"],
            ["form": "type0-grant", "change": "grant-set", "type": "Note", "role": "_world"],
        ]
        for step in steps {
            let answer = try console.post(edit, step)
            #expect(answer.status == 200 && answer.text.contains("id=\"notice\""), "\(step): \(answer.status) \(answer.text.prefix(2000))")
        }
        let expected = """
            DEFINE SCHEMA

                CREATE ROLE editor;
                CREATE ROLE planner;

                RECORD TYPE Note (
                    title STRING QUERYABLE,
                    count INT64 SORTABLE
                );

                RECORD TYPE Trip (
                    title         STRING QUERYABLE SORTABLE,
                    tags          LIST<STRING> SEARCHABLE,
                    secret        ENCRYPTED STRING,
                    stops         LIST<LOCATION>,
                    "___recordID" REFERENCE QUERYABLE,
                    GRANT READ, WRITE TO planner
                );
            """
        let stored = try Self.stored(console.server, id).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(stored == expected, "\(stored)")
        let page = try console.get(base + "/development")
        #expect(page.text.contains("Custom roles: editor, planner") && page.text.contains("READ, WRITE to planner"), "\(page.text)")
        #expect(page.text.contains("<td>tags</td><td>LIST&lt;STRING&gt;</td>"), "\(page.text)")
    }

    /// One refused edit: the form, what it sends, the status and words of the reason.
    struct Refusal: CustomTestStringConvertible, Sendable {
        var name: String
        var form: String
        var fields: [String: String]
        var status = 400
        var reason: String
        /// False when the form named is not on the page: the reason is the page's.
        var beside = true
        var testDescription: String { name }
    }

    static let refusals: [Refusal] = [
        Refusal(name: "an empty type name", form: "type-add", fields: ["change": "type-add", "type": " "], reason: "enter a name for the record type"),
        Refusal(name: "a type that exists", form: "type-add", fields: ["change": "type-add", "type": "Note"], reason: "record type &#39;Note&#39; is defined twice"),
        Refusal(name: "a system type name", form: "type-add", fields: ["change": "type-add", "type": "_Hidden"], reason: "reserved for the system"),
        Refusal(name: "a type name records cannot use", form: "type-add", fields: ["change": "type-add", "type": "2fast"], reason: "is not a valid type name"),
        Refusal(name: "a field that exists", form: "type0-field-add",
                fields: ["change": "field-add", "type": "Note", "field": "title", "fieldType": "STRING"], reason: "is defined twice in record type"),
        Refusal(name: "a SEARCHABLE number", form: "type0-field-add",
                fields: ["change": "field-add", "type": "Note", "field": "n", "fieldType": "INT64", "searchable": "yes"],
                reason: "only STRING and LIST&lt;STRING&gt; fields can be SEARCHABLE"),
        Refusal(name: "an indexed encrypted field", form: "type0-field-add",
                fields: ["change": "field-add", "type": "Note", "field": "n", "fieldType": "ENCRYPTED STRING", "queryable": "yes"],
                reason: "encrypted fields cannot be QUERYABLE"),
        Refusal(name: "a type not in the list", form: "type0-field-add",
                fields: ["change": "field-add", "type": "Note", "field": "n", "fieldType": "NUMBER"], reason: "field type must be one of"),
        Refusal(name: "a system field name", form: "type0-field-add",
                fields: ["change": "field-add", "type": "Note", "field": "_n", "fieldType": "STRING"], reason: "reserved for the system fields"),
        Refusal(name: "a field name records cannot use", form: "type0-field-add",
                fields: ["change": "field-add", "type": "Note", "field": "two words", "fieldType": "STRING"], reason: "is not a valid field name"),
        Refusal(name: "a field of no type", form: "type9-field-add",
                fields: ["change": "field-add", "type": "Nothing", "field": "n", "fieldType": "STRING"], status: 404, reason: "no record type &#39;Nothing&#39;", beside: false),
        Refusal(name: "a SEARCHABLE index on a number", form: "type0-field1-indexes",
                fields: ["change": "field-indexes", "type": "Note", "field": "count", "searchable": "yes"], reason: "can be SEARCHABLE"),
        Refusal(name: "removing a field without the box", form: "type0-field0-remove",
                fields: ["change": "field-remove", "type": "Note", "field": "title"], reason: "nothing was changed"),
        Refusal(name: "removing a system field", form: "type0-field3-remove",
                fields: ["change": "field-remove", "type": "Note", "field": "___etag", "force": "yes"], status: 404, reason: "has no field", beside: false),
        Refusal(name: "removing a type without the box", form: "type0-remove",
                fields: ["change": "type-remove", "type": "Note"], reason: "nothing was changed"),
        Refusal(name: "a built-in role", form: "role-add", fields: ["change": "role-add", "role": "_world"], reason: "is built in and cannot be created"),
        Refusal(name: "a role that exists", form: "role-add", fields: ["change": "role-add", "role": "editor"], reason: "is created twice"),
        Refusal(name: "removing a role without the box", form: "role0-remove", fields: ["change": "role-remove", "role": "editor"],
                reason: "nothing was changed"),
        Refusal(name: "removing a role never created", form: "role0-remove", fields: ["change": "role-remove", "role": "_world", "force": "yes"],
                status: 404, reason: "no role &#39;_world&#39; was created"),
        Refusal(name: "a role name .ckdb cannot write", form: "role-add", fields: ["change": "role-add", "role": "say \"hi\""], reason: "double quote"),
        Refusal(name: "rights for an unknown role", form: "type0-grant",
                fields: ["change": "grant-set", "type": "Note", "role": "ghost", "read": "yes"], reason: "neither built in nor created"),
        Refusal(name: "an unknown change", form: "type-add", fields: ["change": "rename", "type": "Note"], reason: "change must be one of"),
    ]

    @Test(arguments: refusals)
    func badEditsAreRefusedBesideTheirFormAndSaveNothing(_ refusal: Refusal) throws {
        let (console, id, base) = try Self.container()
        let before = try Self.stored(console.server, id)
        let answer = try console.post(base + "/development/edit", refusal.fields.merging(["form": refusal.form]) { $1 })
        #expect(answer.status == refusal.status, "\(answer.text)")
        let place = refusal.beside ? #"<span class="field-error" id="\#(refusal.form)-error" role="alert">"# : #"<p class="error" id="error" role="alert">"#
        let shown = answer.text.range(of: place).map { String(answer.text[$0.upperBound...].prefix { $0 != "<" }) } ?? ""
        #expect(shown.contains(refusal.reason), "the reason at \(place): \(shown.isEmpty ? String(answer.text.prefix(4000)) : shown)")
        if refusal.beside {
            #expect(answer.text.contains("aria-describedby=\"\(refusal.form)-error\""), "the form's input points at its reason")
        }
        #expect(try Self.stored(console.server, id) == before, "nothing was stored")
    }

    @Test func aRefusedNewFieldKeepsWhatWasTyped() throws {
        let (console, _, base) = try Self.container()
        let answer = try console.post(base + "/development/edit", ["form": "type0-field-add", "change": "field-add", "type": "Note", "field": "rating",
                                                                   "fieldType": "DOUBLE", "list": "yes", "searchable": "yes"])
        #expect(answer.status == 400)
        #expect(answer.text.contains(#"id="type0-field-add-field" value="rating""#) && answer.text.contains("<option selected>DOUBLE</option>")
                && answer.text.contains(#"id="type0-field-add-list" checked"#) && answer.text.contains(#"id="type0-field-add-searchable" checked"#),
                "\(answer.text)")
    }

    @Test func dataLosingEditsApplyWithTheirBox() throws {
        let (console, id, base) = try Self.container()
        let server = console.server
        let removed = try console.post(base + "/development/edit", ["form": "type0-field0-remove", "change": "field-remove", "type": "Note",
                                                                    "field": "title", "force": "yes"])
        #expect(removed.status == 200 && removed.text.contains("Saved: removed field Note.title (STRING)"), "\(removed.text)")
        #expect(try !Self.stored(server, id).contains("title"))
        let role = try console.post(base + "/development/edit", ["form": "role0-remove", "change": "role-remove", "role": "editor", "force": "yes"])
        #expect(role.status == 200 && role.text.contains("Custom roles: none.") && role.text.contains("removed role editor"), "\(role.text)")
        let gone = try console.post(base + "/development/edit", ["form": "type0-remove", "change": "type-remove", "type": "Note", "force": "yes"])
        #expect(gone.status == 200 && gone.text.contains("No record types yet."), "\(gone.text)")
    }

    @Test func productionIsChangedOnlyByDeployingAndTheDiffSaysWhatLosesData() throws {
        let (console, id, base) = try Self.container()
        let server = console.server
        #expect(try console.post(base + "/deploy").status == 200)
        let production = try console.get(base + "/production")
        #expect(production.text.contains("Production's schema cannot be edited: it changes only by deploying development to it"), "\(production.text)")
        #expect(!production.text.contains("<form method=\"post\" action=\"\(base)/development/edit\""), "no edit forms on production's page")
        let direct = try console.post(base + "/production/edit", ["form": "type-add", "change": "type-add", "type": "Trip"])
        #expect(direct.status == 400 && direct.text.contains("only by deploying"), "\(direct.text)")
        #expect(try !Self.stored(server, id, "production").contains("Trip"))

        // Development changes: a field's type (remove and add again), an index, a new field.
        let edit = base + "/development/edit"
        #expect(try console.post(edit, ["form": "f", "change": "field-remove", "type": "Note", "field": "count", "force": "yes"]).status == 200)
        #expect(try console.post(edit, ["form": "f", "change": "field-add", "type": "Note", "field": "count", "fieldType": "DOUBLE"]).status == 200)
        #expect(try console.post(edit, ["form": "f", "change": "field-indexes", "type": "Note", "field": "title", "sortable": "yes"]).status == 200)
        #expect(try console.post(edit, ["form": "f", "change": "field-add", "type": "Note", "field": "body", "fieldType": "STRING"]).status == 200)
        let diff = try console.get(base + "/diff")
        #expect(diff.text.contains("<p id=\"diff-summary\">3 changes, 1 can lose production data.</p>"), "\(diff.text)")
        #expect(diff.text.contains("<td>Note</td><td>count</td><td>type changed</td><td>DOUBLE</td><td>INT64</td><td><strong>Can lose production data:</strong> values stored as INT64 no longer match the field&#39;s type</td>"),
                "\(diff.text)")
        #expect(diff.text.contains("<td>Note</td><td>title</td><td>indexes changed</td><td>SORTABLE</td><td>QUERYABLE</td><td>No</td>"), "\(diff.text)")
        #expect(diff.text.contains("<td>Note</td><td>body</td><td>added</td><td>STRING</td><td>—</td><td>No</td>"), "\(diff.text)")
        #expect(diff.text.contains("id=\"field-deploy-force\""), "the deploy form asks for the box")

        let refused = try console.post(base + "/deploy")
        #expect(refused.status == 400 && refused.text.contains("nothing was changed") && refused.text.contains("id=\"deploy-error\""), "\(refused.text)")
        #expect(try Self.stored(server, id, "production").contains("count INT64"))
        let deployed = try console.post(base + "/deploy", ["force": "yes"])
        #expect(deployed.status == 200 && deployed.text.contains("Deployed to production: 3 changes.") && deployed.text.contains("Production has this schema already."),
                "\(deployed.text)")
        #expect(try Self.stored(server, id, "production") == Self.stored(server, id))
    }

    /// The value of the hidden field `name` in a page's HTML.
    static func hidden(_ name: String, in html: String) throws -> String {
        let marker = "name=\"\(name)\" value=\""
        let after = try #require(html.components(separatedBy: marker).dropFirst().first, "no hidden field \(name)")
        return String(after.prefix { $0 != "\"" })
    }

    /// A `.ckdb` page opened before a form saved a change: saving it would undo that change (an
    /// index here, which is not data-losing, so no box would stop it). It is refused with the
    /// text kept and the stored schema shown; saving again replaces it (C60).
    @Test func aSaveFromATextPageOpenedBeforeAnotherChangeIsRefused() throws {
        let (console, id, base) = try Self.container()
        let opened = try console.get(base + "/development/ckdb")
        let fingerprint = try Self.hidden("schema", in: opened.text)
        let edited = try console.post(base + "/development/edit", ["form": "f", "change": "field-indexes", "type": "Note", "field": "title",
                                                                   "queryable": "yes", "sortable": "yes"])
        #expect(edited.status == 200)
        let mine = Self.start.replacingOccurrences(of: "count INT64,", with: "count INT64,\n    body STRING,")
        let stale = try console.post(base + "/development/ckdb", ["ckdb": mine, "schema": fingerprint])
        #expect(stale.status == 409 && stale.text.contains("id=\"field-ckdb-error\"") && stale.text.contains("nothing was saved"), "\(stale.text)")
        #expect(stale.text.contains("id=\"stored-schema\"") && stale.text.contains("body STRING,"), "the text is kept and the stored schema shown")
        var stored = try Self.stored(console.server, id)
        #expect(stored.contains("QUERYABLE SORTABLE") && !stored.contains("body"), "\(stored)")
        // A refusal for another reason keeps the page's fingerprint: still checked.
        let broken = try console.post(base + "/development/ckdb", ["ckdb": mine + "\n  RECORD TYPE", "schema": fingerprint])
        #expect(try broken.status == 400 && Self.hidden("schema", in: broken.text) == fingerprint)
        // Having seen what is stored, saving again replaces it.
        let again = try console.post(base + "/development/ckdb", ["ckdb": mine, "schema": try Self.hidden("schema", in: stale.text)])
        #expect(again.status == 200, "\(again.text)")
        stored = try Self.stored(console.server, id)
        #expect(stored.contains("body") && !stored.contains("SORTABLE"), "\(stored)")
        // The same form sent twice (a reload of the answer) says what is stored: nothing to refuse.
        let twice = try console.post(base + "/development/ckdb", ["ckdb": mine, "schema": try Self.hidden("schema", in: stale.text)])
        #expect(twice.status == 200 && twice.text.contains("Saved: 0 changes."), "\(twice.text)")
    }

    /// The deploy form names the comparison it showed: a data-losing change made in development
    /// after it was shown is not deployed under the box ticked for the changes shown (C61).
    @Test func aDeploymentOfAComparisonThatChangedSinceIsRefused() throws {
        let (console, id, base) = try Self.container()
        #expect(try console.post(base + "/deploy").status == 200)
        #expect(try console.post(base + "/development/edit", ["form": "f", "change": "field-remove", "type": "Note", "field": "count", "force": "yes"]).status == 200)
        let shown = try console.get(base + "/diff")
        #expect(shown.text.contains("<p id=\"diff-summary\">1 change, 1 can lose production data.</p>"), "\(shown.text)")
        let fingerprint = try Self.hidden("schema", in: shown.text)
        // Meanwhile another data-losing change: the title field goes too.
        #expect(try console.post(base + "/development/edit", ["form": "f", "change": "field-remove", "type": "Note", "field": "title", "force": "yes"]).status == 200)
        let stale = try console.post(base + "/deploy", ["force": "yes", "schema": fingerprint])
        #expect(stale.status == 409 && stale.text.contains("id=\"deploy-error\"") && stale.text.contains("nothing was deployed"), "\(stale.text)")
        #expect(stale.text.contains("<p id=\"diff-summary\">2 changes, 2 can lose production data.</p>"), "the page shows the comparison as it is now")
        #expect(try Self.stored(console.server, id, "production").contains("title STRING"))
        let deployed = try console.post(base + "/deploy", ["force": "yes", "schema": try Self.hidden("schema", in: stale.text)])
        #expect(deployed.status == 200 && deployed.text.contains("Deployed to production: 2 changes."), "\(deployed.text)")
        #expect(try Self.stored(console.server, id, "production") == Self.stored(console.server, id))
        // Sent again, it has nothing left to deploy.
        let again = try console.post(base + "/deploy", ["force": "yes", "schema": try Self.hidden("schema", in: stale.text)])
        #expect(again.status == 200 && again.text.contains("Deployed to production: 0 changes."), "\(again.text)")
    }

    /// Each edit reads the stored schema inside its write transaction: edits sent at once all
    /// land (a read before the transaction would let one overwrite another).
    @Test func editsSentAtOnceAllApply() throws {
        let (console, id, base) = try Self.container()
        let names = (1...8).map { "parallel\($0)" }
        let statuses = Mutex<[Int]>([])
        DispatchQueue.concurrentPerform(iterations: names.count) { index in
            // A client each (a ConsoleClient's jar is not for two threads), the same session.
            let client = ConsoleClient(console.server)
            client.cookies = console.cookies
            client.csrf = console.csrf
            let status = (try? client.post(base + "/development/edit", ["form": "f", "change": "field-add", "type": "Note",
                                                                          "field": names[index], "fieldType": "STRING"]).status) ?? 0
            statuses.withLock { $0.append(status) }
        }
        #expect(statuses.withLock { $0 } == Array(repeating: 200, count: names.count))
        let stored = try Self.stored(console.server, id)
        #expect(names.allSatisfy { stored.contains($0 + " ") }, "\(stored)")
    }

    @Test func aLargeSchemaShowsOneRecordTypeAtATime() throws {
        let (console, _, base) = try Self.container()
        let text = "DEFINE SCHEMA\n" + (1...21).map { "  RECORD TYPE T\($0) (title STRING QUERYABLE);\n" }.joined()
        #expect(try console.post(base + "/development/ckdb", ["ckdb": text, "force": "yes"]).status == 200)
        let list = try console.get(base + "/development")
        #expect(list.text.contains("id=\"pick-type\"") && list.text.contains("?type=T21\">T21</a>") && !list.text.contains("<section"), "\(list.text.prefix(3000))")
        let one = try console.get(base + "/development?type=T7")
        #expect(one.text.components(separatedBy: "<section").count == 2 && one.text.contains("<h3 id=\"type6\">T7</h3>"), "\(one.text.prefix(3000))")
        // After an edit the page shows the type the form changed.
        let edited = try console.post(base + "/development/edit", ["form": "type20-field-add", "change": "field-add", "type": "T21", "field": "n", "fieldType": "INT64"])
        #expect(edited.status == 200 && edited.text.contains("<h3 id=\"type20\">T21</h3>") && edited.text.components(separatedBy: "<section").count == 2)
    }

    @Test func editFormsTakeSmallBodiesAndTheTextPageALargeOne() throws {
        let (console, _, base) = try Self.container()
        let filler = String(repeating: "x", count: 100 * 1024)
        let socket = try RawSocket(port: console.server.port)
        socket.send("POST \(base)/development/edit HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 65537\r\n\r\nchange=")
        let reply = socket.readUntilClosed(seconds: 5)
        #expect(reply.status == 413 && reply.body.contains("LIMIT_EXCEEDED"), "an edit form is at most 64 KiB, refused from its head: \(reply.text.prefix(400))")
        let text = try console.post(base + "/development/ckdb", ["ckdb": "DEFINE SCHEMA\n// " + filler + "\n  RECORD TYPE Note (title STRNG);\n"])
        #expect(text.status == 400 && text.text.contains("Line 3, column"), "a .ckdb text takes up to 1 MiB: \(text.status)")
    }
}
