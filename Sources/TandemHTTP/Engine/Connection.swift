/// One accepted connection, as the service thread sees it.
///
/// Owned by `ServiceLoop.connections` (keyed by `id`) and reachable from the wsi through
/// lws' opaque user data, both only on the service thread. Workers never see this object:
/// they carry `id` and `requestID`, and a response whose connection is gone (or has moved on
/// to another request) is dropped when it comes back.
final class Connection {
    enum Phase {
        /// Between requests, or receiving a request head.
        case idle
        /// The head arrived and waits for `HTTPResponder.admit` on a worker; reading is paused
        /// (bytes lws had already read are kept in `body`).
        case admitting
        /// The head arrived; body bytes are being collected.
        case receivingBody
        /// Handed to the responder, waiting for its response.
        case awaitingResponse
        /// The response (possibly an error answer) is queued or being written; body bytes still
        /// arriving are ignored.
        case responding
        /// An error answer is written; the rest of the announced body is read and dropped before
        /// closing, so the close does not reset the connection under the client's feet.
        case discardingBody
        /// Upgraded: a WebSocket (`webSocket`), never HTTP again.
        case webSocket
    }

    /// Unique for the server's lifetime (a generation number, never reused).
    let id: UInt64
    let wsi: OpaquePointer
    let remoteAddress: String

    var phase = Phase.idle
    /// Identifies the current request; a completion must carry the same value.
    var requestID: UInt64 = 0
    var head: HTTPRequestHead?
    var body: [UInt8] = []
    var bodyLimit = 0
    /// The announced body length (`content-length`).
    var bodyLength = 0
    /// Reading is paused until the socket can take more (`ServiceLoop.stallWrites`): between
    /// the writes of a response (decisions E39), or after one while the client's next input
    /// waits unread (`holdInputUntilWritable`, E41).
    var writeStalled = false
    /// Since when, while `writeStalled`.
    var stalledSince: ContinuousClock.Instant?
    /// In `ServiceLoop.stalledWriters` (looked at until its response is done and it is not
    /// paused).
    var writeWatched = false
    /// Body bytes accepted so far (in `body` or given to `spool`).
    var bodyReceived = 0
    /// When reading the body began (`beginBody`), for its rate (`ServiceLoop.cutBodies`).
    var bodyBegan: ContinuousClock.Instant?
    var bodyPolicy = HTTPBodyPolicy(limit: 0)
    /// Where a spooled body is being written; handed to the request at dispatch.
    var spool: BodySpool?
    /// lws delivered the whole body while the head was being admitted.
    var bodyCompleteEarly = false
    /// In-memory body bytes reserved in `ServerCounters` (released when the response is done).
    var reservedBodyBytes = 0
    /// Holds one of `maxSpooledBodies` slots (released when the response is done).
    var holdsSpoolSlot = false
    /// Who the reservation above is charged to (`ServiceLoop.holders`), while one is held.
    var bodyHolder: String?
    /// The client asked for (or HTTP/1.1 implies) keep-alive.
    var keepAlive = true
    var isHTTP11 = true
    /// Close after this response whatever the client asked (errors, shutdown).
    var closeAfterResponse = false
    var isHeadRequest = false
    /// Body bytes announced by content-length and not yet received.
    var bodyOutstanding = 0
    var expectsContinue = false
    /// Reading is flow-controlled off while the responder works.
    var receivePaused = false
    var outgoing: OutgoingResponse?
    /// The response's file body has nothing read yet: reading is paused until it has
    /// (`ServiceLoop.fileReady`).
    var awaitingFile = false
    /// How far lws had read the socket when the last transaction on this connection completed
    /// (see `ReadAhead`); kept across requests.
    var readMark = ReadMark.noTransactionYet
    /// A head is awaited: set when the connection opens and when a transaction completes with
    /// the connection kept, cleared when a head is delivered (see `headTimerFired`).
    var headPending = true
    /// The arming number of the head deadline that counts (`HeadDeadlines`), and whether it
    /// passed: the lws timer then due at once is the head's, not an older one's.
    var headArming: UInt64 = 0
    var headDeadlinePassed = false
    /// Closed to free a descriptor (`ServiceLoop.acceptFailed`), and not yet gone.
    var shed = false
    /// Fell back to a raw socket (lws could not read a request line) and was answered.
    var rawAnswered = false
    /// Set once the connection is a WebSocket, until its close callback.
    var webSocket: WebSocketMailbox?

    enum ReadMark {
        /// The next head is the connection's first: lws read it from the socket.
        case noTransactionYet
        /// `ReadAhead.mark(_:)` when the last transaction completed (`nil`: unknown).
        case taken(UInt64?)
    }

    init(id: UInt64, wsi: OpaquePointer, remoteAddress: String) {
        self.id = id
        self.wsi = wsi
        self.remoteAddress = remoteAddress
    }

    /// Forgets the finished request, keeping the connection.
    func resetRequest() {
        phase = .idle
        head = nil
        body = []
        bodyLimit = 0
        bodyLength = 0
        bodyReceived = 0
        bodyPolicy = HTTPBodyPolicy(limit: 0)
        spool = nil
        bodyCompleteEarly = false
        closeAfterResponse = false
        isHeadRequest = false
        bodyOutstanding = 0
        expectsContinue = false
        outgoing = nil
        awaitingFile = false
    }
}

/// A response being written, with how far the writing has got.
struct OutgoingResponse {
    var response: HTTPResponse
    /// Whether the body goes on the wire (not for HEAD, 1xx, 204, 304).
    var sendsBody: Bool
    var headersWritten = false
    var bodyOffset = 0
    /// The last byte has been handed to lws, which may still hold some of it buffered.
    var finalWritten = false
    /// When writing began, and the bytes (head and body) handed to lws since: the rate the
    /// client reads at (`ServiceLoop.cutBodies`).
    let began = ContinuousClock.now
    var handed = 0
    /// Reads `response.file` ahead of the writes (nil for bodies in memory, and bodies not sent).
    var file: FileReader?
}
