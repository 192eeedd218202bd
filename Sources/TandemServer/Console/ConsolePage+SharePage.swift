import Foundation
import TandemCore
import TandemHTTP
import TandemStore

/// A share's page in the console (decisions C17): `GET /console/shares/{shortGUID}` shows the
/// owner's share page, and `POST /console/shares/{shortGUID}/{action}` sends one of the owner's
/// forms (`SharePage.ownerActions`) for the owner, through the same code and services as the
/// owner's own page. Every action is recorded with the account that sent it, in the server's log
/// (`RequestLog.message`, printed even with `--quiet`). An account that is not an administrator
/// reaches only the shares it owns; any other is `NOT_FOUND`, as an unknown one (C50).
extension ConsolePage {
    func sharePage(_ visit: Visit, segments: [String]) throws -> HTTPResponse {
        let head = visit.context.request.head
        guard let guid = segments.first, ShareTokens.isWellFormed(guid), segments.count <= 2,
              let found = try services.store.read({ try $0.share(shortGUID: guid) }) else {
            throw CloudKitError(.notFound, "no share at \(head.path)")
        }
        guard visit.isAdmin || found.share.owner == visit.user.recordName else {
            throw CloudKitError(.notFound, "no share of yours at \(head.path)")
        }
        guard let owner = try services.store.read({ try $0.user(matching: UserIdentity(userRecordName: found.share.owner)) }) else {
            throw CloudKitError(.notFound, "the share's owner no longer exists")
        }
        let page = SharePage(services: services)
        let base = "/console/shares/\(guid)"
        func render(notice: String?, problem: SharePageHTML.Problem?, status: Int) throws -> HTTPResponse {
            var html = try page.html(found.share, guid: guid, viewer: owner, baseURL: visit.context.baseURL, csrf: visit.csrf)
            html.formBase = base
            html.actingNote = owner.recordName == visit.user.recordName ? "Console: your share. Each change is logged with your account."
                : "Console: you act for the owner, \(owner.email ?? owner.recordName), as \(visit.name). Each change is logged with your account."
            html.notice = notice
            html.problem = problem
            return self.page(html.render(), status: status)
        }
        switch (head.method, segments.count) {
        case ("GET", 1):
            return try render(notice: visit.fields["done"].flatMap { SharePage.doneMessages[$0] }, problem: nil, status: 200)
        case ("POST", 2) where SharePage.ownerActions.contains(segments[1]):
            let action = segments[1]
            var shareVisit = SharePage.Visit(context: visit.context, guid: guid, found: found)
            let viewer = ShareSession.Viewer(user: owner, token: "")
            do {
                let response = try page.perform(action, fields: visit.fields, viewer: viewer, found: found, visit: &shareVisit, base: base)
                log.message("console: \(visit.isAdmin ? "administrator " : "")\(visit.user.email ?? "") (\(visit.user.recordName)) did \(action) on share \(guid) for its owner \(owner.recordName)")
                return response
            } catch let error as CloudKitError {
                return try render(notice: nil, problem: SharePage.problem(action: action, fields: visit.fields, field: nil, error), status: error.code.httpStatus)
            } catch let problem as FieldProblem {
                return try render(notice: nil, problem: SharePage.problem(action: action, fields: visit.fields, field: problem.field, problem.error),
                                  status: problem.error.code.httpStatus)
            }
        case (_, 1):
            throw MethodNotAllowed(allowed: "GET")
        default:
            throw CloudKitError(.notFound, "no console page at \(head.path)")
        }
    }
}
