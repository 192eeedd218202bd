import TandemCore
import TandemHTTP
import TandemStore

/// The minimal conversations of decisions G1 under `/tandem/1/{container}/{environment}/`:
/// `conversations` `{members: [userRecordName]}` → `{conversationID, members}`;
/// `conversations/members/add|remove` `{conversationID, userRecordName}` → `{conversationID, members}`.
enum ConversationRoutes {
    static func routes(_ services: Services) -> [DatabaseRoute] {
        var routes = [
            DatabaseRoute(operation: "conversations", method: "POST", databases: [], summary: "Create a conversation (G1)",
                          requestSchema: "ConversationCreateRequest", responseSchema: "Conversation") { context in
                let body = try context.jsonBody()
                guard let members = body["members"]?.arrayValue?.compactMap(\.stringValue) else {
                    throw CloudKitError.badRequest("'members' must list user record names")
                }
                let user = context.user!.recordName
                let id = try services.conversations.create(members: Set(members), creator: user, container: context.container,
                                                           environment: context.environment)
                return try answer(id, context, services)
            },
        ]
        for action in ["add", "remove"] {
            routes.append(DatabaseRoute(operation: "conversations/members/\(action)", method: "POST", databases: [],
                                        summary: "\(action == "add" ? "Add" : "Remove") a conversation member (G1)",
                                        requestSchema: "ConversationMemberRequest", responseSchema: "Conversation") { context in
                let body = try context.jsonBody()
                guard let id = body["conversationID"]?.stringValue, let member = body["userRecordName"]?.stringValue else {
                    throw CloudKitError.badRequest("needs 'conversationID' and 'userRecordName'")
                }
                try services.conversations.change(id, user: member, adding: action == "add", caller: context.user!.recordName,
                                                  container: context.container, environment: context.environment)
                return try answer(id, context, services)
            })
        }
        return routes
    }

    private static func answer(_ id: String, _ context: RequestContext, _ services: Services) throws -> HTTPResponse {
        let members = try services.conversations.members(of: id, container: context.container, environment: context.environment) ?? []
        return Responses.json(["conversationID": .string(id), "members": .array(members.sorted().map { .string($0) })])
    }
}
