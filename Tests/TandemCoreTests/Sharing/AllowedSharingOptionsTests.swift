import Testing
import TandemCore

/// The allowed-sharing-options rule, table-driven: every policy × every grant a share save can
/// make (a participant's permission, the public permission), and how a share's own options
/// narrow the container's (decisions R15–R17).
@Suite("Allowed sharing options")
struct AllowedSharingOptionsTests {
    typealias O = AllowedSharingOptions

    static let policies: [(String, O)] = O.PermissionOption.allCases.flatMap { permission in
        O.AccessOption.allCases.map { access in ("\(permission.rawValue)/\(access.rawValue)", O(permission: permission, access: access)) }
    }

    /// What each policy allows, in `policies` order (permission ANY, READ_ONLY, READ_WRITE, each
    /// with access ANY, ANYONE_WITH_LINK, SPECIFIED_RECIPIENTS_ONLY): "ok" or the refusal's code.
    static let expected: [(grant: String, results: [String])] = [
        ("participant READ_ONLY",  ["ok", "ok", "ok", "ok", "ok", "ok", "BAD_REQUEST", "BAD_REQUEST", "BAD_REQUEST"]),
        ("participant READ_WRITE", ["ok", "ok", "ok", "BAD_REQUEST", "BAD_REQUEST", "BAD_REQUEST", "ok", "ok", "ok"]),
        ("public NONE",            ["ok", "BAD_REQUEST", "ok", "ok", "BAD_REQUEST", "ok", "ok", "BAD_REQUEST", "ok"]),
        ("public READ_ONLY",       ["ok", "ok", "BAD_REQUEST", "ok", "ok", "BAD_REQUEST", "BAD_REQUEST", "BAD_REQUEST", "BAD_REQUEST"]),
        ("public READ_WRITE",      ["ok", "ok", "BAD_REQUEST", "BAD_REQUEST", "BAD_REQUEST", "BAD_REQUEST", "ok", "ok", "BAD_REQUEST"]),
    ]

    static func outcome(_ options: O, _ grant: String) -> String {
        let parts = grant.split(separator: " ")
        let permission = Share.Permission(rawValue: String(parts[1]))!
        do {
            if parts[0] == "participant" { try options.enforceParticipant(permission, who: "someone") } else { try options.enforcePublic(permission) }
            return "ok"
        } catch {
            #expect(error.reason.hasPrefix("outside the allowed sharing options"))
            return error.code.rawValue
        }
    }

    @Test(arguments: expected)
    func policyTimesGrant(grant: String, results: [String]) {
        #expect(Self.policies.count == results.count)
        for ((name, options), want) in zip(Self.policies, results) {
            #expect(Self.outcome(options, grant) == want, "\(grant) under \(name)")
        }
    }

    @Test func narrowingKeepsWhatBothAllowAndFindsConflicts() {
        let any = O.standard, readOnly = O(permission: .readOnly), readWrite = O(permission: .readWrite)
        let invitedOnly = O(access: .specifiedRecipientsOnly), linkOnly = O(access: .anyoneWithLink)
        #expect(any.narrowed(by: readOnly) == readOnly)
        #expect(readOnly.narrowed(by: any) == readOnly)
        #expect(readOnly.narrowed(by: invitedOnly) == O(permission: .readOnly, access: .specifiedRecipientsOnly))
        #expect(readOnly.narrowed(by: readWrite) == nil)
        #expect(invitedOnly.narrowed(by: linkOnly) == nil)
        #expect(readOnly.defaultParticipantPermission == .readOnly && any.defaultParticipantPermission == .readWrite)
    }

    @Test func wireFormRoundTripsAndRefusesUnknownValues() throws {
        let options = O(permission: .readWrite, access: .specifiedRecipientsOnly)
        #expect(try O(json: options.json, context: "share") == options)
        #expect(try O(json: .object([:]), context: "share") == .standard)
        #expect(throws: CloudKitError.self) { try O(json: .object(["allowedParticipantPermissionOptions": "WRITE"]), context: "share") }
        #expect(throws: CloudKitError.self) { try O(json: .object(["allowedParticipantAccessOptions": "EVERYONE"]), context: "share") }
        #expect(throws: CloudKitError.self) { try O(json: "ANY", context: "share") }
        // A share record's key, decoded as a save's change.
        let changes = try ShareCodec.decodeChanges(["allowedSharingOptions": options.json], context: "records[0]")
        #expect(changes.allowedSharingOptions == options)
    }
}
