import TandemStore

/// What one `records/modify` request shares across its operations.
final class ModifyBatch {
    /// Names of the records the request saves.
    let savedNames: Set<String>
    /// Names of the records saved successfully so far (a new share's root must be among them).
    var succeededNames = Set<String>()
    /// A share or its participants changed (who sees the zone may have changed).
    var sharingChanged = false
    /// What the operations changed, for notifications after commit.
    var changes: [ChangeEvent.RecordChange] = []
    /// Records changed by a later operation than their own (a root linked to its new share):
    /// their results are read again before the response.
    var rewritten = Set<String>()
    /// People added to or removed from shares, for Shared with You membership notices.
    var participantChanges: [ShareMembershipNotices.Change] = []
    /// Shares whose title or type changed, for their collaboration highlights (R4).
    var metadataChanges: [ShareMetadataRefresh.Change] = []
    /// People whose highlight lists showed a share the request stopped (W17) or whose people
    /// it changed (W19), to be refreshed after commit.
    var shareHighlightViewers = Set<String>()
    /// Short GUIDs of shares whose people the request changed: the conversations they reach
    /// afterwards are read at the end of the request, their members added to the above (W19).
    var reshapedShares = Set<String>()
    /// Participants the request added, for invitation emails after commit (A30).
    var invitations: [ShareInvitations.Added] = []
    let baseURL: String
    /// Signs participants' pictures in the shares the response shows (R32).
    var signer: AssetURLSigner?
    /// Most participants a share may have, the owner included (decisions D8).
    let participantLimit: Int

    init(savedNames: Set<String>, baseURL: String, participantLimit: Int) {
        self.savedNames = savedNames
        self.baseURL = baseURL
        self.participantLimit = participantLimit
    }

    func presenter(_ reader: any StoreReading) -> SharePresenter {
        SharePresenter(reader: reader, baseURL: baseURL, signer: signer)
    }
}
