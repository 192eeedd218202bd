import Testing
import TandemCore

/// The pure policy, table-driven: every principal × every action on a private share, plus the
/// cases where the share's facts (public permission, requests allowed, block list) decide.
@Suite("Access policy")
struct AccessPolicyTests {
    typealias P = AccessPolicy.Principal
    typealias A = AccessPolicy.Action

    static let principals: [(String, P)] = [
        ("owner", .owner), ("administrator", .participant(.administrator, .readWrite)), ("readWrite", .participant(.privateUser, .readWrite)),
        ("readOnly", .participant(.privateUser, .readOnly)), ("publicReadOnly", .participant(.publicUser, .readOnly)),
        ("invited", .invited), ("removed", .removed), ("stranger", .stranger), ("anonymous", .anonymous),
    ]

    static let actions: [A] = [.read, .write, .delete, .deleteRoot, .manageParticipants, .changePublicPermission, .deleteShare,
                               .resolve, .accept, .requestAccess, .manageRequests, .declineInvitation]

    /// Expected codes per action, in `principals` order; "ok" = allowed. A private share that
    /// does not allow access requests.
    static let privateShare: [A: [String]] = [
        .read:                   ["ok", "ok", "ok", "ok", "ok", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "AUTHENTICATION_REQUIRED"],
        .write:                  ["ok", "ok", "ok", "ACCESS_DENIED", "ACCESS_DENIED", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "AUTHENTICATION_REQUIRED"],
        .delete:                 ["ok", "ok", "ok", "ACCESS_DENIED", "ACCESS_DENIED", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "AUTHENTICATION_REQUIRED"],
        .deleteRoot:             ["ok", "ACCESS_DENIED", "ACCESS_DENIED", "ACCESS_DENIED", "ACCESS_DENIED", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "AUTHENTICATION_REQUIRED"],
        .manageParticipants:     ["ok", "ok", "ACCESS_DENIED", "ACCESS_DENIED", "ACCESS_DENIED", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "AUTHENTICATION_REQUIRED"],
        .changePublicPermission: ["ok", "ACCESS_DENIED", "ACCESS_DENIED", "ACCESS_DENIED", "ACCESS_DENIED", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "AUTHENTICATION_REQUIRED"],
        .deleteShare:            ["ok", "ok", "ok", "ok", "ok", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "AUTHENTICATION_REQUIRED"],
        .resolve:                ["ok", "ok", "ok", "ok", "ok", "ok", "NOT_FOUND", "NOT_FOUND", "AUTHENTICATION_REQUIRED"],
        .accept:                 ["ok", "ok", "ok", "ok", "ok", "ok", "NOT_FOUND", "NOT_FOUND", "AUTHENTICATION_REQUIRED"],
        .requestAccess:          ["BAD_REQUEST", "PARTICIPANT_ALREADY_INVITED", "PARTICIPANT_ALREADY_INVITED", "PARTICIPANT_ALREADY_INVITED",
                                  "PARTICIPANT_ALREADY_INVITED", "PARTICIPANT_ALREADY_INVITED", "NOT_FOUND", "NOT_FOUND", "AUTHENTICATION_REQUIRED"],
        .manageRequests:         ["ok", "ok", "ACCESS_DENIED", "ACCESS_DENIED", "ACCESS_DENIED", "NOT_FOUND", "NOT_FOUND", "NOT_FOUND", "AUTHENTICATION_REQUIRED"],
        .declineInvitation:      ["BAD_REQUEST", "BAD_REQUEST", "BAD_REQUEST", "BAD_REQUEST", "BAD_REQUEST", "ok", "NOT_FOUND", "NOT_FOUND", "AUTHENTICATION_REQUIRED"],
    ]

    static func code(_ decision: AccessPolicy.Decision) -> String {
        switch decision {
        case .allow: "ok"
        case .deny(let code, _): code.rawValue
        }
    }

    @Test("private share: principal × action", arguments: actions)
    func privateShareTable(action: A) {
        let facts = AccessPolicy.ShareFacts(publicPermission: .none)
        let got = Self.principals.map { Self.code(AccessPolicy.decide($0.1, action, share: facts)) }
        #expect(got == Self.privateShare[action]!, "\(action)")
    }

    struct FactCase: Sendable, CustomStringConvertible {
        var principal: P
        var action: A
        var facts: AccessPolicy.ShareFacts
        var expected: String
        var description: String { "\(principal) \(action) \(facts.publicPermission.rawValue) requests=\(facts.allowsAccessRequests) blocked=\(facts.callerIsBlocked)" }
    }

    static let factCases: [FactCase] = [
        // Anyone with a public share's URL may see it and join; a removed participant too.
        FactCase(principal: .stranger, action: .resolve, facts: .init(publicPermission: .readOnly), expected: "ok"),
        FactCase(principal: .stranger, action: .accept, facts: .init(publicPermission: .readWrite), expected: "ok"),
        FactCase(principal: .removed, action: .accept, facts: .init(publicPermission: .readOnly), expected: "ok"),
        // ...but joining does not let them read before they accept.
        FactCase(principal: .stranger, action: .read, facts: .init(publicPermission: .readWrite), expected: "NOT_FOUND"),
        // Access requests: only when allowed and not blocked; otherwise indistinguishable from no share.
        FactCase(principal: .stranger, action: .requestAccess, facts: .init(publicPermission: .none, allowsAccessRequests: true), expected: "ok"),
        FactCase(principal: .removed, action: .requestAccess, facts: .init(publicPermission: .none, allowsAccessRequests: true), expected: "ok"),
        FactCase(principal: .stranger, action: .requestAccess,
                 facts: .init(publicPermission: .none, allowsAccessRequests: true, callerIsBlocked: true), expected: "NOT_FOUND"),
        FactCase(principal: .invited, action: .requestAccess, facts: .init(publicPermission: .none, allowsAccessRequests: true),
                 expected: "PARTICIPANT_ALREADY_INVITED"),
        // A public user with write permission writes but never deletes the root.
        FactCase(principal: .participant(.publicUser, .readWrite), action: .write, facts: .init(publicPermission: .readWrite), expected: "ok"),
        FactCase(principal: .participant(.publicUser, .readWrite), action: .deleteRoot, facts: .init(publicPermission: .readWrite),
                 expected: "ACCESS_DENIED"),
        // A read-only administrator still manages people but cannot write records.
        FactCase(principal: .participant(.administrator, .readOnly), action: .manageParticipants, facts: .init(publicPermission: .none), expected: "ok"),
        FactCase(principal: .participant(.administrator, .readOnly), action: .write, facts: .init(publicPermission: .none), expected: "ACCESS_DENIED"),
    ]

    @Test("facts of the share decide", arguments: factCases)
    func facts(_ test: FactCase) {
        #expect(Self.code(AccessPolicy.decide(test.principal, test.action, share: test.facts)) == test.expected)
    }

    @Test("denials to people outside a share never reveal it: the reason is the same for every hidden action")
    func hiddenReasonsMatch() {
        let facts = AccessPolicy.ShareFacts(publicPermission: .none)
        let reasons = Set(Self.actions.compactMap { action -> String? in
            if case .deny(.notFound, let reason) = AccessPolicy.decide(.stranger, action, share: facts) { return reason }
            return nil
        })
        #expect(reasons.count == 1)
    }
}
