import Foundation
import TandemCore
import TandemStore

/// Which database, as whom, which zone and which record type a data browser page shows
/// (decisions C20), read from the page's query or form fields:
///
/// - `database`: `public` (the default), `private` or `shared`.
/// - `user`: the account the console acts as, by email or user record name; empty means the
///   signed-in account. The private and shared databases are that account's; in the public
///   database the schema's grants apply to it. Every read and write runs as that account through
///   the records services, so the console sees and changes only what it could. Only a server
///   administrator may name another account: for anyone else a `user` naming someone else is
///   `ACCESS_DENIED` (decisions C50), so no link or form field changes whose data a page shows.
/// - `zone`: the zone name (`_defaultZone` when empty); in the shared database `owner` names the
///   zone's owner (user record name or email).
/// - `type`: the record type to query or create.
///
/// Problems are collected per field (`errors`) so the page shows each beside its field.
struct ConsoleDataSelection {
    var container: String
    var environment: Environment
    var database: DatabaseType = .public
    var userText = ""
    var zoneName = ZoneID.defaultZoneName
    var ownerText = ""
    var recordType = ""
    /// The account acted as; nil when `user` named nobody.
    var actor: UserAccount?
    /// The zone owner's record name (shared database).
    var owner: String?
    /// Messages by field name (`database`, `user`, `zone`, `owner`, `type`).
    var errors: [String: String] = [:]

    /// - Parameters:
    ///   - signedIn: the console's account, acted as when `user` is empty.
    ///   - mayActAsOthers: whether `user` may name another account (server administrators).
    /// - Throws: `ACCESS_DENIED` when `user` names another account and `mayActAsOthers` is false.
    init(container: String, environment: Environment, fields: [String: String], signedIn: UserAccount, mayActAsOthers: Bool,
         reader: any StoreReading) throws {
        self.container = container
        self.environment = environment
        let databaseText = fields["database"] ?? ""
        if databaseText.isEmpty {
            database = .public
        } else if let chosen = DatabaseType(rawValue: databaseText) {
            database = chosen
        } else {
            errors["database"] = "the database is public, private or shared"
        }
        userText = (fields["user"] ?? "").trimmingCharacters(in: .whitespaces)
        if userText.isEmpty {
            actor = signedIn
        } else if let found = try reader.user(recordNameOrEmail: userText), mayActAsOthers || found.recordName == signedIn.recordName {
            actor = found
        } else if !mayActAsOthers {
            // The same answer whether or not the account exists: a member learns nothing of others.
            throw CloudKitError(.accessDenied, "you read and write only as yourself; only server administrators act as another account")
        } else {
            errors["user"] = "no account '\(userText)'"
        }
        let zone = (fields["zone"] ?? "").trimmingCharacters(in: .whitespaces)
        if !zone.isEmpty {
            if Names.isValidRecordOrZoneName(zone) { zoneName = zone } else { errors["zone"] = "a zone name is 1–255 printable ASCII characters" }
        }
        ownerText = (fields["owner"] ?? "").trimmingCharacters(in: .whitespaces)
        if database == .shared {
            if ownerText.isEmpty {
                errors["owner"] = "in the shared database, name the zone's owner (or pick one of the zones listed)"
            } else if let found = try reader.user(recordNameOrEmail: ownerText) {
                owner = found.recordName
            } else {
                errors["owner"] = "no account '\(ownerText)'"
            }
        }
        if database == .public && zoneName != ZoneID.defaultZoneName {
            errors["zone"] = "the public database has only the default zone"
        }
        recordType = (fields["type"] ?? "").trimmingCharacters(in: .whitespaces)
        if !recordType.isEmpty && !Names.isValidRecordType(recordType) {
            errors["type"] = "a record type is a letter followed by letters, digits or '_'"
        }
    }

    /// The scope the records services run in, as the HTTP API builds it for the actor.
    func scope(baseURL: String) -> RequestScope? {
        errors.isEmpty ? databaseScope(baseURL: baseURL) : nil
    }

    /// The actor's database, whatever the zone fields say: enough to list its zones, so a
    /// shared database's zones (with their owners) can be picked before an owner is named.
    func databaseScope(baseURL: String) -> RequestScope? {
        guard let actor, errors["database"] == nil, errors["user"] == nil else { return nil }
        let owner = database == .public ? DatabaseScope.publicOwner : actor.recordName
        return RequestScope(database: DatabaseScope(container: container, environment: environment, database: database, owner: owner),
                            user: actor.recordName, deviceID: "console", baseURL: baseURL)
    }

    var zoneID: ZoneID { ZoneID(zoneName: zoneName, ownerRecordName: database == .shared ? owner : nil) }

    /// The data browser's address for this container environment.
    var base: String { "/console/containers/\(ConsoleHTML.percent(container))/data/\(environment.rawValue)" }

    /// The selection as query parameters (already percent-encoded), for links between pages.
    var query: String {
        var pairs = [("database", database.rawValue), ("zone", zoneName)]
        if !userText.isEmpty { pairs.append(("user", userText)) }
        if database == .shared { pairs.append(("owner", ownerText)) }
        if !recordType.isEmpty { pairs.append(("type", recordType)) }
        return pairs.map { "\($0.0)=\(ConsoleHTML.percent($0.1))" }.joined(separator: "&")
    }

    /// The selection as hidden inputs, for forms that act on it.
    var hiddenFields: String {
        var html = ConsoleHTML.hidden("database", database.rawValue) + ConsoleHTML.hidden("zone", zoneName) + ConsoleHTML.hidden("user", userText)
        if database == .shared { html += ConsoleHTML.hidden("owner", ownerText) }
        return html
    }

    /// "private database of ada@example.com, zone Notes" and the like.
    var summary: String {
        let who = actor.map { $0.email ?? $0.recordName } ?? userText
        switch database {
        case .public: return "public database, as \(who)"
        case .private: return "private database of \(who), zone \(zoneName)"
        case .shared: return "shared database of \(who), zone \(zoneName) of \(ownerText)"
        }
    }
}
