import Foundation
import TandemCore
import TandemHTTP
import TandemStore

/// Membership sync prompts under `/tandem/1/{container}/{environment}/collaborations/prompts/...`.
enum CollaborationRoutes {
    static func routes(_ services: Services) -> [DatabaseRoute] {
        let prompts = services.prompts
        typealias R = ConversationRoutes
        return [
            DatabaseRoute(operation: "collaborations/prompts/list", method: "GET", databases: [],
                          summary: "The caller's membership prompts (pending; ?all=true for every state)", requestSchema: nil,
                          responseSchema: "MembershipPromptList") { context in
                let list = try prompts.prompts(owner: try R.user(context), container: context.container, environment: context.environment,
                                               all: context.parameters["all"] == "true")
                return Responses.json(["prompts": .array(list)])
            },
            DatabaseRoute(operation: "collaborations/prompts/respond", method: "POST", databases: [],
                          summary: "Accepts or declines a membership prompt: {promptID, accept}", requestSchema: "MembershipPromptResponse",
                          responseSchema: "MembershipPromptResult") { context in
                let body = try context.jsonBody()
                guard let accept = try R.optionalBool(body, "accept") else { throw CloudKitError.badRequest("send accept: true or false") }
                let (prompt, updates) = try prompts.respond(prompt: try R.string(body, "promptID"), owner: try R.user(context), accept: accept)
                return Responses.json(["prompt": prompt, "participantsUpdates": .array(updates.map { update in
                    var object: JSONObject = ["collaborationIdentifier": .string(update.collaborationIdentifier), "person": .string(update.person),
                                              "change": .string(update.added ? "add" : "remove")]
                    if let hash = update.removedRootHash { object["rootHash"] = .string(Data(hash).base64EncodedString()) }
                    return .object(object)
                })])
            },
        ]
    }
}
