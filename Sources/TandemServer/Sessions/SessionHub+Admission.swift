import Foundation
import TandemCore
import TandemStore

extension SessionHub {
    /// Whether `user` is joined to the live session `sessionID` as `participantID`: the check a
    /// journal upload passes before its body is read (`BodyAdmission`), and again when stored.
    /// Another node's session is checked against its copy here (N36).
    func hasParticipant(_ participantID: UUID, user: String, container: String, environment: Environment, sessionID: UUID) -> Bool {
        guard let session = registry.withLock({ $0.sessions[sessionID] }), session.container == container,
              session.environment == environment else {
            return replica(of: sessionID, container: container, environment: environment)?.participants
                .contains { $0.id == participantID && $0.user == user } == true
        }
        return session.state.withLock { $0.participants.contains { $0.id == participantID && $0.user == user } }
    }
}
