import Foundation
import TandemCore
import TandemHTTP
import TandemStore

/// The highlight center under `/tandem/1/{container}/{environment}/highlights/...`
/// (SharedWithYou `SWHighlightCenter`): list, lookup, hide, feedback, notices.
enum HighlightRoutes {
    static func routes(_ services: Services) -> [DatabaseRoute] {
        let highlights = services.highlights
        let notices = services.notices
        typealias R = ConversationRoutes
        return [
            DatabaseRoute(operation: "highlights/list", method: "GET", databases: [],
                          summary: "The caller's highlights for an app in D20 order, with the authorization state (?app=TEAMID.bundle.id)",
                          requestSchema: nil, responseSchema: "HighlightList") { context in
                let app = try R.parameter(context, "app")
                let viewer = try R.user(context)
                let snapshot = try highlights.snapshot(viewer: viewer, appID: app, container: context.container,
                                                       environment: context.environment)
                return Responses.json(["app": .string(app), "authorization": .string(snapshot.authorization.rawValue),
                                       "highlights": .fragment(snapshot.json),
                                       "people": try PeoplePresenter.people(services, context, viewer: viewer) { try $0.people(of: snapshot.highlights) }])
            },
            DatabaseRoute(operation: "highlights/lookup", method: "GET", databases: [],
                          summary: "The highlight for a URL (?app=…&url=…) or a collaboration (?app=…&collaboration=ID); NOT_FOUND when none",
                          requestSchema: nil, responseSchema: "Highlight") { context in
                let app = try R.parameter(context, "app")
                let viewer = try R.user(context)
                let found: Highlight?
                if let identifier = context.parameters["collaboration"], !identifier.isEmpty {
                    found = try highlights.snapshot(viewer: viewer, appID: app, container: context.container, environment: context.environment)
                        .highlights.first { $0.collaboration?.id == identifier }
                } else {
                    found = try highlights.highlight(url: try R.parameter(context, "url"), viewer: viewer, appID: app,
                                                     container: context.container, environment: context.environment)
                }
                guard let found else { throw CloudKitError(.notFound, "no highlight for that URL") }
                return Responses.json(HighlightCodec.highlight(found))
            },
            DatabaseRoute(operation: "highlights/hide", method: "POST", databases: [],
                          summary: "Stops surfacing a URL for the caller: {url}", requestSchema: "HighlightURLRequest", responseSchema: "Empty") { context in
                let body = try context.jsonBody()
                try highlights.hide(url: try R.string(body, "url"), viewer: try R.user(context), container: context.container,
                                    environment: context.environment)
                return Responses.json([:])
            },
            DatabaseRoute(operation: "highlights/feedback", method: "POST", databases: [],
                          summary: "Interaction feedback: {url, context: summary|detail}", requestSchema: "HighlightFeedbackRequest",
                          responseSchema: "Empty") { context in
                let body = try context.jsonBody()
                try highlights.feedback(url: try R.string(body, "url"), context: try R.string(body, "context"), viewer: try R.user(context),
                                        container: context.container, environment: context.environment)
                return Responses.json([:])
            },
            DatabaseRoute(operation: "highlights/notices/post", method: "POST", databases: [],
                          summary: "Posts a highlight event into the conversations that shared the collaboration: {collaborationIdentifier | url, event: change|mention|persistence|membership, trigger, mentionedIdentity?, mentionedHandle?}",
                          requestSchema: "NoticePostRequest", responseSchema: "NoticeList") { context in
                let body = try context.jsonBody()
                let viewer = try R.user(context)
                let posted = try notices.post(try NoticeRequest(body), actor: viewer, container: context.container,
                                              environment: context.environment)
                return Responses.json(["notices": .array(posted.map(ConversationCodec.event)),
                                       "people": try PeoplePresenter.people(services, context, viewer: viewer) { try $0.people(of: posted) }])
            },
            DatabaseRoute(operation: "highlights/notices/list", method: "GET", databases: [],
                          summary: "The caller's notices of a collaboration not cleared yet (?collaboration=ID)", requestSchema: nil,
                          responseSchema: "NoticeList") { context in
                let viewer = try R.user(context)
                let list = try notices.notices(collaboration: try R.parameter(context, "collaboration"), viewer: viewer,
                                               container: context.container, environment: context.environment)
                return Responses.json(["notices": .array(list.map(ConversationCodec.event)),
                                       "people": try PeoplePresenter.people(services, context, viewer: viewer) { try $0.people(of: list) }])
            },
            DatabaseRoute(operation: "highlights/notices/clear", method: "POST", databases: [],
                          summary: "Clears the caller's notices of a collaboration: {collaborationIdentifier}", requestSchema: "NoticeClearRequest",
                          responseSchema: "Empty") { context in
                let body = try context.jsonBody()
                try notices.clear(collaboration: try R.string(body, "collaborationIdentifier"), viewer: try R.user(context),
                                  container: context.container, environment: context.environment)
                return Responses.json([:])
            },
        ]
    }
}
