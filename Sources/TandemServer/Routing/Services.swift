import TandemCore
import TandemStore

/// The services one server instance runs, built once at start.
struct Services: Sendable {
    let store: any Store
    let authenticator: Authenticator
    let records: RecordService
    let shares: ShareService
    let changes: ChangeFeedService
    let subscriptions: SubscriptionService
    /// Matches committed changes to subscriptions and delivers notifications.
    let hub: ChangeHub
    /// The hubs' fan-out, in-process or between nodes (decisions N1).
    let bus: EventBus
    /// Long polls (tokens/create), their tokens and mailboxes in the store (decisions N58).
    let webCourier: WebCourier
    /// Open stream WebSockets.
    let streams = StreamRegistry()
    let webhooks: WebhookSender
    let zones: ZoneService
    let assetRoutes: AssetRoutes
    let tokens: SyncTokens
    /// External base URL for links the server hands out; nil derives it from the Host header.
    let publicURL: String?
    /// App IDs (`TEAMID.bundle.id`) in the server's own apple-app-site-association.
    let appIDs: [String]
    let links: LinkService
    /// Shared with You: conversations, highlights, collaboration (issue 8).
    let conversationHub: ConversationHub
    let conversations: ConversationService
    let highlights: HighlightService
    let highlightStream: HighlightStream
    /// Who has a collaboration open now (issue 23 item 6; R27–R30).
    let presence: CollaborationPresence
    let notices: NoticeService
    let prompts: MembershipPromptService
    /// Device keys, collaboration identities and identity proofs (D24).
    let identity: IdentityService
    /// Group sessions (issue 9).
    let sessions: SessionHub
    /// Activity invitations (issue 23 item 4; R19–R22).
    let activityInvitations: ActivityInvitations
    /// Accounts, sign-in and web auth tokens (issue 16).
    let accounts: AccountService
    /// Deletes accounts with everything they own (A15).
    let deletion: AccountDeletion
    /// OpenID Connect issuers' discovery documents and keys, fetched through the outbound rule.
    let oidc: OIDCProviderDirectory
    let secret: [UInt8]
    /// The console's first-run setup code (decisions C2).
    let consoleSetup = ConsoleSetup()

    init(store: any Store, secret: [UInt8], publicURL: String? = nil, participantLimit: Int = Limits.participantsPerShare, appIDs: [String] = [],
         hub: ChangeHub, bus: EventBus, log: RequestLog, links: LinkService? = nil, journal: AssetFiles,
         sessionSettings: SessionHub.Settings = SessionHub.Settings(), outbound: OutboundRule = OutboundRule(),
         accountSettings: AccountSettings = AccountSettings(), mailer: (any AccountMailer)? = nil) {
        self.appIDs = appIDs
        self.links = links ?? LinkService(store: store)
        self.store = store
        self.publicURL = publicURL
        self.hub = hub
        self.bus = bus
        webhooks = WebhookSender(log: log, rule: outbound)
        webCourier = WebCourier(store: store, log: log)
        hub.add(webCourier.mailboxes)
        hub.add(webCourier)
        hub.add(streams)
        hub.add(webhooks)
        authenticator = Authenticator(store: store)
        authenticator.connect(to: bus)
        let smtp = accountSettings.smtpURL.map { url in
            SMTPMailer(client: SMTPClient(url: url, from: accountSettings.smtpFrom, username: accountSettings.smtpUsername,
                                          password: accountSettings.smtpPassword), log: log)
        }
        accounts = AccountService(store: store, authenticator: authenticator, settings: accountSettings, log: log, mailer: mailer ?? smtp)
        accounts.limiter.connect(to: bus)
        conversationHub = ConversationHub(streams: streams, bus: bus)
        streams.connect(to: bus)
        var records = RecordService(store: store, participantLimit: participantLimit)
        records.hub = hub
        records.conversationHub = conversationHub
        records.invitations = ShareInvitations(accounts: accounts)
        self.records = records
        var shares = ShareService(store: store, participantLimit: participantLimit)
        shares.hub = hub
        shares.conversationHub = conversationHub
        self.shares = shares
        tokens = SyncTokens(secret: secret)
        changes = ChangeFeedService(store: store, tokens: tokens)
        subscriptions = SubscriptionService(store: store)
        var zones = ZoneService(store: store)
        zones.hub = hub
        zones.conversationHub = conversationHub
        self.zones = zones
        assetRoutes = AssetRoutes(store: store, signer: AssetURLSigner(secret: secret))
        conversations = ConversationService(store: store, hub: conversationHub, changeHub: hub, participantLimit: participantLimit,
                                            publicURL: publicURL)
        highlights = HighlightService(store: store, links: self.links, hub: conversationHub)
        highlightStream = HighlightStream(service: highlights, hub: conversationHub, signer: assetRoutes.signer, log: log)
        notices = NoticeService(store: store, hub: conversationHub)
        presence = CollaborationPresence(store: store, hub: conversationHub, log: log, bus: bus.isLocal ? nil : bus)
        presence.startExpiry()
        prompts = MembershipPromptService(store: store, hub: conversationHub, changeHub: hub, participantLimit: participantLimit)
        identity = IdentityService(store: store)
        activityInvitations = ActivityInvitations(store: store, membership: conversations, secret: secret)
        activityInvitations.lookups.connect(to: bus, limit: AttemptTraffic.invitationLookups)
        sessions = SessionHub(membership: conversations, journal: journal, settings: sessionSettings, bus: bus.isLocal ? nil : bus,
                              invitations: activityInvitations)
        self.secret = secret
        oidc = OIDCProviderDirectory(rule: outbound)
        deletion = AccountDeletion(store: store, hub: hub)
    }
}
