import Testing
import TandemCore

@Suite("Share codec")
struct ShareCodecTests {
    @Test("a share encodes CloudKit's share keys, with INVITED for pending participants (D1)")
    func encode() throws {
        let owner = Share.Participant(participantID: "O", identity: UserIdentity(userRecordName: "_o", givenName: "Olive"), role: .owner,
                                      permission: .readWrite, acceptanceStatus: .accepted)
        let invitee = Share.Participant(participantID: "P", identity: UserIdentity(emailAddress: "p@example.com"), role: .privateUser,
                                        permission: .readOnly, acceptanceStatus: .pending, isApprovedRequester: true, dateAddedToShare: 5)
        var share = Share(shortGUID: "abc", url: "https://tandem.example.com/share/abc", rootRecordName: "note", publicPermission: .none,
                          participants: [owner, invitee], allowsAccessRequests: true, requesters: [], blockedIdentities: nil)
        share.currentUserParticipant = owner
        var object = JSONObject()
        ShareCodec.encode(share, into: &object)
        let json = JSONValue.object(object)
        #expect(json["shortGUID"] == "abc")
        #expect(json["stableUrl"]?["displayedHostname"] == "tandem.example.com")
        #expect(json["publicPermission"] == "NONE")
        #expect(json["owner"]?["type"] == "OWNER")
        #expect(json["currentUserParticipant"]?["participantId"] == "O")
        let second = json["participants"]?.arrayValue?[1]
        #expect(second?["acceptanceStatus"] == "INVITED")
        #expect(second?["type"] == "USER")
        #expect(second?["isApprovedRequester"] == true)
        #expect(second?["userIdentity"]?["hasiCloudAccount"] == false)
        #expect(second?["userIdentity"]?["lookupInfo"]?["emailAddress"] == "p@example.com")
        #expect(json["requesters"] == .array([]))
        #expect(json["blockedIdentities"] == nil)
    }

    struct BadCase: Sendable, CustomStringConvertible {
        var json: JSONValue
        var word: String
        var description: String { word }
    }

    static let bad: [BadCase] = [
        BadCase(json: ["publicPermission": "UNKNOWN"], word: "publicPermission"),
        BadCase(json: ["participants": [["lookupInfo": [:]]]], word: "lookupInfo needs"),
        BadCase(json: ["participants": [["lookupInfo": ["emailAddress": .string(String(repeating: "a", count: 250) + "@x.com")]]]], word: "longer than"),
        BadCase(json: ["participants": [["lookupInfo": ["phoneNumber": "12"]]]], word: "phoneNumber"),
        BadCase(json: ["participants": [["lookupInfo": ["emailAddress": "x@y.z"], "type": "KING"]]], word: "type"),
        BadCase(json: ["participants": [["participantId": 5]]], word: "participantId"),
    ]

    @Test("malformed share keys are refused with the key named", arguments: bad)
    func refusals(_ test: BadCase) {
        #expect(throws: CloudKitError.self) { try ShareCodec.decodeChanges(test.json.objectValue!, context: "op") }
        do {
            _ = try ShareCodec.decodeChanges(test.json.objectValue!, context: "op")
        } catch {
            #expect(error.reason.contains(test.word), "\(error.reason)")
        }
    }

    @Test("participants decode by lookup info or participant ID, with role and permission")
    func decodeParticipants() throws {
        let changes = try ShareCodec.decodeChanges(["participants": [
            ["userIdentity": ["lookupInfo": ["emailAddress": "a@example.com"]], "permission": "READ_WRITE", "type": "ADMINISTRATOR"],
            ["participantId": "P1", "permission": "READ_ONLY"],
            ["lookupInfo": ["phoneNumber": "+1 (555) 010-2000"]],
        ], "allowsAccessRequests": true], context: "op")
        let people = try #require(changes.participants)
        #expect(people[0].lookup.emailAddress == "a@example.com")
        #expect(people[0].role == .administrator)
        #expect(people[1].participantID == "P1")
        #expect(people[2].lookup.phoneNumber.map(PhoneNumbers.normalize) == "+15550102000")
        #expect(changes.allowsAccessRequests == true)
    }

    @Test("identity equality: user record name, else email (any case) or phone (any formatting)")
    func samePerson() {
        #expect(UserIdentity(emailAddress: "A@Example.com").isSamePerson(as: UserIdentity(emailAddress: "a@example.com")))
        #expect(UserIdentity(phoneNumber: "+1 555 010 2000").isSamePerson(as: UserIdentity(phoneNumber: "+15550102000")))
        #expect(UserIdentity(userRecordName: "_a", emailAddress: "x@y.z").isSamePerson(as: UserIdentity(userRecordName: "_b", emailAddress: "x@y.z")) == false)
        #expect(UserIdentity().isSamePerson(as: UserIdentity()) == false)
    }
}
