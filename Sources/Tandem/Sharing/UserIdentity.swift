public import Foundation
internal import TandemCore

/// A person as the server shows them (CloudKit's `CKUserIdentity`).
///
/// CloudKit Web Services: "User Identity" (`userRecordName`, `lookupInfo`, `nameComponents`).
/// Contact details of other participants are shown only to owners and administrators (decisions T6).
public struct UserIdentity: Sendable, Hashable {
    /// How a person is found (CloudKit's `CKUserIdentity.LookupInfo`).
    public struct LookupInfo: Sendable, Hashable {
        public var emailAddress: String?
        public var phoneNumber: String?
        public var userRecordID: Record.ID?

        public init(emailAddress: String) { self.emailAddress = emailAddress }
        public init(phoneNumber: String) { self.phoneNumber = phoneNumber }
        public init(userRecordID: Record.ID) { self.userRecordID = userRecordID }
        init(emailAddress: String?, phoneNumber: String?, userRecordID: Record.ID?) {
            self.emailAddress = emailAddress
            self.phoneNumber = phoneNumber
            self.userRecordID = userRecordID
        }
    }

    /// Nil for an invitee who has no account yet.
    public var userRecordID: Record.ID?
    public var lookupInfo: LookupInfo?
    public var nameComponents: PersonNameComponents?
    /// The person's picture (Tandem's `avatarURL`; decisions A48, R32): a signed URL that works
    /// without credentials for 1–2 hours, for the reader only; given for the signed-in user's own
    /// identity (`currentUserIdentity()`), for discoverable people found by a lookup, and for
    /// people you share a conversation or a share with (share participants, attributions'
    /// senders, notices' actors); nil without a picture or where their name is not shown. Fetch
    /// again for a fresh one.
    public var avatarURL: URL?
    /// True when the person has an account (`hasiCloudAccount`).
    public var hasAccount: Bool { userRecordID != nil }

    init(wire: TandemCore.UserIdentity) {
        userRecordID = wire.userRecordName.map { Record.ID(recordName: $0) }
        lookupInfo = LookupInfo(emailAddress: wire.emailAddress, phoneNumber: wire.phoneNumber, userRecordID: userRecordID)
        if wire.givenName != nil || wire.familyName != nil {
            var names = PersonNameComponents()
            names.givenName = wire.givenName
            names.familyName = wire.familyName
            nameComponents = names
        }
        avatarURL = wire.avatarURL.flatMap { URL(string: $0) }
    }

    /// `person`'s entry in an answer's `people` object (`{userRecordName: identity}`; decisions
    /// R32), or nil when it has none.
    init?(person: String, in people: JSONValue?) {
        guard let entry = people?[person], entry.objectValue != nil else { return nil }
        self.init(wire: ShareCodec.decodeIdentity(entry))
    }

    init(lookupInfo: LookupInfo) {
        self.lookupInfo = lookupInfo
        userRecordID = lookupInfo.userRecordID
    }
}
