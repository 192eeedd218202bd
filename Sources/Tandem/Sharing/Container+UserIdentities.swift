internal import TandemCore

extension Container {
    /// The user a lookup info names (`CKContainer.userIdentity(forEmailAddress:)` /
    /// `discoverUserIdentity(with:)`, CloudKit Web Services `users/discover`).
    ///
    /// By email or phone only users who chose to be found answer (`setDiscoverable(true)`); by
    /// user record ID any user answers, with names only when discoverable.
    /// - Returns: the identity (`userRecordID`, `lookupInfo`, `nameComponents`), or nil when
    ///   nobody matches or the person cannot be found.
    /// - Throws: `notAuthenticated`, network errors.
    public func userIdentity(for lookupInfo: UserIdentity.LookupInfo) async throws(TandemError) -> UserIdentity? {
        var lookup = JSONObject()
        if let email = lookupInfo.emailAddress { lookup["emailAddress"] = .string(email) }
        if let phone = lookupInfo.phoneNumber { lookup["phoneNumber"] = .string(phone) }
        if let id = lookupInfo.userRecordID { lookup["userRecordName"] = .string(id.recordName) }
        let json = try await transport.json(transport.databaseURL(.public, "users/discover"),
                                            body: .object(["lookupInfos": .array([.object(lookup)])]))
        guard let user = json["users"]?.arrayValue?.first else { return nil }
        return UserIdentity(wire: ShareCodec.decodeIdentity(user))
    }

    /// Chooses whether others can find the signed-in user by email or phone (a Tandem route,
    /// `users/discoverability`; CloudKit asks through the system's discoverability prompt).
    public func setDiscoverable(_ discoverable: Bool) async throws(TandemError) {
        _ = try await transport.json(transport.tandemURL("users/discoverability"), body: .object(["discoverable": .bool(discoverable)]))
    }
}
