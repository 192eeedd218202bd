internal import TandemCore

extension SyncEngine {
    /// Before the first fetch of this engine (and after a `notAuthenticated`): asks the server
    /// who the credentials name and compares with the saved state's user (K14).
    /// - signIn: no user saved; switchAccounts: another user saved — tokens and queues are
    ///   dropped first (the data belonged to the other user); signOut: `notAuthenticated`.
    func checkAccount() async throws(TandemError) {
        guard background.needsAccountCheck() else { return }
        let previous = state.read { $0.userRecordName }
        let current: String
        do throws(TandemError) {
            current = try await database.transport.currentUserRecordName()
        } catch {
            background.resetAccountCheck()
            if error.needsSignIn, let previous {
                reset(user: nil)
                await emitStateUpdateIfNeeded()
                await emit(.accountChange(.signOut(previousUser: Record.ID(recordName: previous))))
            }
            throw error
        }
        guard previous != current else { return }
        if let previous {
            reset(user: current)
            await emitStateUpdateIfNeeded()
            await emit(.accountChange(.switchAccounts(previousUser: Record.ID(recordName: previous), currentUser: Record.ID(recordName: current))))
        } else {
            state.update { $0.userRecordName = current }
            await emitStateUpdateIfNeeded()
            await emit(.accountChange(.signIn(currentUser: Record.ID(recordName: current))))
        }
    }

    private func reset(user: String?) {
        state.update { data in
            data.databaseToken = nil
            data.zoneTokens = [:]
            data.zonesToFetch = []
            data.records = []
            data.zones = []
            data.userRecordName = user
        }
    }
}
