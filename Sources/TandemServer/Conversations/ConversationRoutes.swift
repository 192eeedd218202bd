import Foundation
import TandemCore
import TandemHTTP
import TandemStore

/// Conversations under `/tandem/1/{container}/{environment}/conversations/...` (the Messages
/// role of Shared with You). Every route needs a signed-in user.
enum ConversationRoutes {
    static func routes(_ services: Services) -> [DatabaseRoute] {
        let conversations = services.conversations
        return [
            DatabaseRoute(operation: "conversations/create", method: "POST", databases: [],
                          summary: "Starts a 1:1 or group conversation: {members: [user record name | email | phone], title?, group?}",
                          requestSchema: "ConversationCreateRequest", responseSchema: "Conversation") { context in
                let body = try context.jsonBody()
                let members = try strings(body, "members", limit: ConversationService.memberLimit)
                let created = try conversations.create(creator: try user(context), members: members, title: try optionalString(body, "title"),
                                                       group: try optionalBool(body, "group"), container: context.container,
                                                       environment: context.environment)
                return Responses.json(ConversationCodec.conversation(created))
            },
            DatabaseRoute(operation: "conversations/list", method: "GET", databases: [],
                          summary: "The caller's conversations, newest first", requestSchema: nil, responseSchema: "ConversationList") { context in
                let list = try conversations.list(user: try user(context), container: context.container, environment: context.environment)
                return Responses.json(["conversations": .array(list.map(ConversationCodec.conversation))])
            },
            DatabaseRoute(operation: "conversations/lookup", method: "GET", databases: [],
                          summary: "One conversation of the caller (?conversation=ID)", requestSchema: nil, responseSchema: "Conversation") { context in
                Responses.json(ConversationCodec.conversation(try conversations.lookup(try parameter(context, "conversation"), viewer: try user(context), in: place(context))))
            },
            DatabaseRoute(operation: "conversations/members/add", method: "POST", databases: [],
                          summary: "Adds a member to a group conversation: {conversation, member}", requestSchema: "ConversationMemberRequest",
                          responseSchema: "ConversationEvent") { context in
                let body = try context.jsonBody()
                let event = try conversations.addMember(try string(body, "member"), conversation: try string(body, "conversation"), actor: try user(context), in: place(context))
                return Responses.json(ConversationCodec.event(event))
            },
            DatabaseRoute(operation: "conversations/members/remove", method: "POST", databases: [],
                          summary: "Removes a member (or the caller: leaving): {conversation, member}", requestSchema: "ConversationMemberRequest",
                          responseSchema: "ConversationEvent") { context in
                let body = try context.jsonBody()
                let event = try conversations.removeMember(try string(body, "member"), conversation: try string(body, "conversation"), actor: try user(context), in: place(context))
                return Responses.json(ConversationCodec.event(event))
            },
            DatabaseRoute(operation: "conversations/messages/send", method: "POST", databases: [],
                          summary: "Sends a message: {conversation, text?, links?: [{url, title?, imageURL?}], collaboration?: {collaborationIdentifier, url, title?, contentType}, shareMode?: collaborate|sendCopy, permission?: READ_ONLY|READ_WRITE}",
                          requestSchema: "MessageSendRequest", responseSchema: "ConversationEvent") { context in
                let body = try context.jsonBody()
                var attachments: [ConversationService.LinkAttachment] = []
                if let links = body["links"] {
                    guard case .array(let items) = links else { throw CloudKitError.badRequest("links must be an array of {url, title?, imageURL?}") }
                    guard items.count <= MessageLinks.limit else { throw CloudKitError(.limitExceeded, "at most \(MessageLinks.limit) links per message") }
                    for item in items {
                        guard case .object(let link) = item else { throw CloudKitError.badRequest("each link is an object {url, title?, imageURL?}") }
                        attachments.append(.init(url: try string(link, "url"), title: try optionalString(link, "title"),
                                                 imageURL: try optionalString(link, "imageURL")))
                    }
                }
                var started: ConversationService.StartedCollaboration?
                if let value = body["collaboration"] {
                    guard case .object(let object) = value else { throw CloudKitError.badRequest("collaboration must be an object") }
                    started = .init(identifier: try string(object, "collaborationIdentifier"), url: try string(object, "url"),
                                    title: try optionalString(object, "title"), contentType: try optionalString(object, "contentType") ?? "public.data")
                }
                let event = try conversations.send(conversation: try string(body, "conversation"), sender: try user(context),
                                                   text: try optionalString(body, "text") ?? "", attachments: attachments, collaboration: started,
                                                   mode: try ConversationService.ShareMode(body), in: place(context))
                return Responses.json(ConversationCodec.event(event))
            },
            DatabaseRoute(operation: "conversations/messages/list", method: "GET", databases: [],
                          summary: "The timeline, oldest first (?conversation=ID&continuationMarker=N&resultsLimit=1…200)",
                          requestSchema: nil, responseSchema: "ConversationEventPage") { context in
                let marker = try context.parameters["continuationMarker"].map { value -> Int64 in
                    guard let number = Int64(value), number >= 0 else { throw CloudKitError.badRequest("continuationMarker must come from an earlier page") }
                    return number
                } ?? 0
                let limit = try context.parameters["resultsLimit"].map { value -> Int in
                    guard let number = Int(value), number > 0 else { throw CloudKitError.badRequest("resultsLimit must be a positive number") }
                    return min(number, 200)
                } ?? 50
                let page = try conversations.history(conversation: try parameter(context, "conversation"), viewer: try user(context),
                                                     after: marker, limit: limit, in: place(context))
                return Responses.json(["events": .array(page.events.map(ConversationCodec.event)),
                                       "continuationMarker": .string(String(page.marker)), "moreComing": .bool(page.moreComing)])
            },
            DatabaseRoute(operation: "conversations/pins/modify", method: "POST", databases: [],
                          summary: "Pins or unpins a link for the caller: {conversation, url, pinned}", requestSchema: "PinRequest",
                          responseSchema: "Empty") { context in
                let body = try context.jsonBody()
                try conversations.pin(url: try string(body, "url"), conversation: try string(body, "conversation"), viewer: try user(context),
                                      pinned: try optionalBool(body, "pinned") ?? true, in: place(context))
                return Responses.json([:])
            },
            DatabaseRoute(operation: "conversations/contacts/list", method: "GET", databases: [],
                          summary: "The caller's contacts", requestSchema: nil, responseSchema: "ContactList") { context in
                Responses.json(contactList(try conversations.contacts(owner: try user(context))))
            },
            DatabaseRoute(operation: "conversations/contacts/modify", method: "POST", databases: [],
                          summary: "Adds and removes contacts: {add: [handle], remove: [handle]}", requestSchema: "ContactModifyRequest",
                          responseSchema: "ContactList") { context in
                let body = try context.jsonBody()
                let add = body["add"] == nil ? [] : try strings(body, "add", limit: 1000)
                let remove = body["remove"] == nil ? [] : try strings(body, "remove", limit: 1000)
                return Responses.json(contactList(try conversations.modifyContacts(owner: try user(context), add: add, remove: remove)))
            },
            DatabaseRoute(operation: "conversations/consent/list", method: "GET", databases: [],
                          summary: "The caller's Shared with You switches", requestSchema: nil, responseSchema: "ConsentList") { context in
                Responses.json(consentList(try conversations.consent(viewer: try user(context))))
            },
            DatabaseRoute(operation: "conversations/consent/modify", method: "POST", databases: [],
                          summary: "Turns Shared with You on or off: {scope: global|app|conversation, target?, allowed}",
                          requestSchema: "ConsentModifyRequest", responseSchema: "ConsentList") { context in
                let body = try context.jsonBody()
                guard let scope = StoredConsent.Scope(rawValue: try string(body, "scope")) else {
                    throw CloudKitError.badRequest("scope must be 'global', 'app' or 'conversation'")
                }
                guard let allowed = try optionalBool(body, "allowed") else { throw CloudKitError.badRequest("send allowed: true or false") }
                let viewer = try user(context)
                try conversations.setConsent(viewer: viewer, scope: scope, target: try optionalString(body, "target"), allowed: allowed,
                                             in: place(context))
                return Responses.json(consentList(try conversations.consent(viewer: viewer)))
            },
        ]
    }

    static func contactList(_ contacts: [StoredContact]) -> JSONValue {
        ["contacts": .array(contacts.map { contact in
            var object: JSONObject = ["handle": .string(contact.handle)]
            if let user = contact.userRecordName { object["userRecordName"] = .string(user) }
            return .object(object)
        })]
    }

    static func consentList(_ consent: [StoredConsent]) -> JSONValue {
        ["consent": .array(consent.map { ["scope": .string($0.scope.rawValue), "target": .string($0.target), "allowed": .bool($0.allowed)] })]
    }

    // MARK: Body helpers (shared by the Shared with You routes)

    /// The container and environment of the request's path.
    static func place(_ context: RequestContext) -> ConversationService.Place {
        ConversationService.Place(container: context.container, environment: context.environment)
    }

    static func user(_ context: RequestContext) throws -> String {
        guard let user = context.user else { throw CloudKitError(.authenticationRequired, "sign in first") }
        return user.recordName
    }

    static func parameter(_ context: RequestContext, _ name: String) throws -> String {
        guard let value = context.parameters[name], !value.isEmpty else { throw CloudKitError.badRequest("send ?\(name)=…") }
        return value
    }

    static func string(_ body: JSONObject, _ key: String) throws -> String {
        guard case .string(let value)? = body[key], !value.isEmpty else { throw CloudKitError.badRequest("'\(key)' must be a non-empty string") }
        return value
    }

    static func optionalString(_ body: JSONObject, _ key: String) throws -> String? {
        switch body[key] {
        case nil, .null?: return nil
        case .string(let value)?: return value
        default: throw CloudKitError.badRequest("'\(key)' must be a string")
        }
    }

    static func optionalBool(_ body: JSONObject, _ key: String) throws -> Bool? {
        switch body[key] {
        case nil, .null?: return nil
        case .bool(let value)?: return value
        default: throw CloudKitError.badRequest("'\(key)' must be true or false")
        }
    }

    static func strings(_ body: JSONObject, _ key: String, limit: Int) throws -> [String] {
        guard case .array(let items)? = body[key] else { throw CloudKitError.badRequest("'\(key)' must be an array of strings") }
        guard items.count <= limit else { throw CloudKitError(.limitExceeded, "at most \(limit) '\(key)'") }
        return try items.map { item in
            guard case .string(let value) = item, !value.isEmpty else { throw CloudKitError.badRequest("'\(key)' must hold non-empty strings") }
            return value
        }
    }
}
