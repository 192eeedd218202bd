/// How the body of one request is received, decided from its head on the service thread
/// (`HTTPResponder.bodyPolicy(for:)`).
///
/// - `limit`: the largest body accepted, in bytes; a larger `content-length` is answered 413
///   before any of it is read.
/// - `spooled`: the body goes to a temporary file as it arrives (`HTTPRequest.bodyFile`)
///   instead of memory. At most `HTTPServerConfiguration.maxSpooledBodies` such bodies are
///   received at once (more are answered 503), each holding at most
///   `HTTPServerConfiguration.spoolWindow` bytes in memory on their way to disk.
/// - `admitFirst`: before any body byte is accepted, `HTTPResponder.admit(_:)` runs on a
///   worker with the head alone (authentication, authorization); a refusal is the answer and
///   the body is never read. A client that sent `expect: 100-continue` is told to continue
///   only once admitted.
/// - `requiresLength`: a `POST`, `PUT` or `PATCH` with neither `content-length` nor
///   `transfer-encoding` is answered 411 (true, the default), or taken as having an empty body
///   (false; RFC 9112 §6.3: such a request's body length is zero), for endpoints that need no body
///   and clients such as `curl -X POST` that send none. The connection closes after that answer
///   (libwebsockets 4.1 would take what follows as the body).
public struct HTTPBodyPolicy: Sendable, Equatable {
    public var limit: Int
    public var spooled: Bool
    public var admitFirst: Bool
    public var requiresLength: Bool

    public init(limit: Int, spooled: Bool = false, admitFirst: Bool = false, requiresLength: Bool = true) {
        self.limit = limit
        self.spooled = spooled
        self.admitFirst = admitFirst
        self.requiresLength = requiresLength
    }
}

/// What the HTTP layer holds of request bodies right now (any thread may read it).
public struct HTTPBodyFigures: Sendable, Equatable {
    /// Bytes of in-memory bodies being received or answered (reserved by `content-length`
    /// when the head arrives), the bytes of spooled bodies on their way to disk included.
    public var bufferedBytes: Int
    /// The most `bufferedBytes` has been since start.
    public var peakBufferedBytes: Int
    /// Spooled bodies being received or answered (a head is charged once admitted).
    public var spooledBodies: Int
    /// Heads admitted before their body since start, decided on the service thread from memory
    /// (`HTTPResponder.quickAdmission`).
    public var admissionsFromMemory: Int
    /// Heads whose admission a worker decided since start (`HTTPResponder.admission(for:)`).
    public var admissionsByWorkers: Int

    public init(bufferedBytes: Int = 0, peakBufferedBytes: Int = 0, spooledBodies: Int = 0,
                admissionsFromMemory: Int = 0, admissionsByWorkers: Int = 0) {
        self.bufferedBytes = bufferedBytes
        self.peakBufferedBytes = peakBufferedBytes
        self.spooledBodies = spooledBodies
        self.admissionsFromMemory = admissionsFromMemory
        self.admissionsByWorkers = admissionsByWorkers
    }
}
