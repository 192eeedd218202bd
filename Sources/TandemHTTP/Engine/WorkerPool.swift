import Foundation
import Synchronization

/// A fixed set of threads running `HTTPResponder.respond(to:)` for queued requests, and the
/// `WebSocketResponder` for WebSocket mailboxes.
///
/// One queue guarded by one `NSCondition`: the service thread appends, an idle worker takes.
/// Threads are created once; nothing is allocated per request beyond the queue slot.
///
/// **Running workers** (decisions E28). A worker counts as running from when it takes a job
/// until the job is `stallNanoseconds` old; past that it is taken to be blocked (a store write
/// waiting for its group commit, a PostgreSQL round trip, a long poll) and stops counting. A
/// sleeping worker is woken, and a woken one takes a job, only while fewer than `runningLimit`
/// run; a worker that has just finished a job takes the next without asking. So on a machine of
/// two cores a burst of short requests is answered by about two workers in turn instead of
/// waking one thread per request, whose sleeps and wake-ups cost more than the requests. While
/// jobs wait and the limit is reached, one sleeping worker (the sentinel) sleeps only until the
/// oldest running job turns blocked, and then takes a job: a queued job waits at most about
/// `stallNanoseconds` for workers that are blocked. Only brief jobs (`Job.brief`, reads) wait
/// so; any other job wakes a worker as if there were no limit, since writes gather in their
/// group commit and want every one of them waiting there. `runningLimit` 0: no limit.
final class WorkerPool: @unchecked Sendable {
    /// A request waiting for a worker, and where its answer goes.
    struct Job: Sendable {
        var connectionID: UInt64
        var requestID: UInt64
        var request: HTTPRequest
        /// `HTTPResponder.runsBriefly`: the job may wait for a running worker.
        var brief = false
    }

    /// What a worker takes from the queue.
    private enum Work {
        case request(Job)
        /// A WebSocket's events; each connection has at most one of these queued or running.
        case webSocket(WebSocketMailbox)
        /// A head to admit before its body is read (`HTTPResponder.admit`).
        case admission(Job)

        var isBrief: Bool {
            if case .request(let job) = self { return job.brief }
            return false
        }
    }

    private let condition = NSCondition()
    // Guarded by `condition`.
    private var jobs = RingBuffer<Work>()
    private var closed = false
    private var running = 0
    /// Workers blocked in `wait()`.
    private var waiting = 0
    /// Workers that finished a job and are on their way back to the queue; they will take a
    /// queued job without being signalled. Raised without the lock, lowered under it.
    private let returning = Atomic<Int>(0)

    /// When each worker took its current job (`Clock` nanoseconds); 0 while it sleeps.
    private var startedAt: [UInt64]
    /// Sleeping workers whose sleep ends at the oldest running job's stall (at most one needed).
    private var sentinels = 0
    /// Queued jobs that are not brief: a worker woken for one takes the first job at once.
    private var urgent = 0

    private let capacity: Int
    private let runningLimit: Int
    private let stallNanoseconds: UInt64
    private let responder: any HTTPResponder
    private let completions: CompletionQueue

    /// - Parameters:
    ///   - runningLimit: workers running at once before queued jobs wait for one (0: no limit).
    ///   - stallMicroseconds: how long a job runs before its worker counts as blocked.
    init(workerCount: Int, capacity: Int, runningLimit: Int = 0, stallMicroseconds: Int = 1000,
         responder: any HTTPResponder, completions: CompletionQueue, serverID: Int) {
        self.capacity = capacity
        self.runningLimit = runningLimit
        self.stallNanoseconds = UInt64(max(1, stallMicroseconds)) * 1000
        self.responder = responder
        self.completions = completions
        startedAt = Array(repeating: 0, count: workerCount)
        running = workerCount
        for index in 0..<workerCount {
            let thread = Thread { [self] in
                ServerThread.mark(serverID: serverID)
                self.work(index)
            }
            thread.name = "tandem-http-worker-\(index)"
            thread.start()
        }
    }

    /// Queues a job; `false` when the queue is full or the pool is closed.
    func submit(_ job: Job) -> Bool {
        enqueue(.request(job), bounded: true)
    }

    /// Queues an admission decision for a head (the job's body is empty); `false` when the
    /// queue is full or the pool is closed.
    func submitAdmission(_ job: Job) -> Bool {
        enqueue(.admission(job), bounded: true)
    }

    /// Schedules a WebSocket mailbox. Not bounded by the queue capacity: each connection has at
    /// most one mailbox in the queue, so the connections bound it. `false` once closed.
    @discardableResult
    func submit(_ mailbox: WebSocketMailbox) -> Bool {
        enqueue(.webSocket(mailbox), bounded: false)
    }

    private func enqueue(_ work: Work, bounded: Bool) -> Bool {
        condition.lock()
        guard !closed, !bounded || jobs.count < capacity else {
            condition.unlock()
            return false
        }
        jobs.append(work)
        let brief = work.isBrief
        if !brief { urgent += 1 }
        // With fast responders a returning worker usually takes the job, which saves waking
        // (and later parking) another thread: two context switches per request. Past the
        // running limit only a sentinel is woken, if there is none yet.
        let wake = waiting > 0 && jobs.count > returning.load(ordering: .relaxed)
            && (runningLimit == 0 || !brief || sentinels == 0 || runningWorkers(at: Self.now()).count < runningLimit)
        condition.unlock()
        // Signalled after unlocking, so the woken worker does not block on the lock at once.
        if wake { condition.signal() }
        return true
    }

    /// Stops taking jobs: queued ones are dropped, running ones finish, then workers exit.
    func close() {
        condition.lock()
        closed = true
        jobs.removeAll()
        urgent = 0
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until every worker has exited or `deadline` passes; `true` if all exited.
    func waitForExit(until deadline: Date) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while running > 0 {
            if !condition.wait(until: deadline) { return running == 0 }
        }
        return true
    }

    private func work(_ index: Int) {
        // The finished job (and its request, whose spooled body file goes with it) is released
        // before the worker waits for the next one, not when the next one comes.
        var afterJob = false
        while let current = next(index, afterJob: afterJob) {
            afterJob = true
            switch current {
            case .request(let request):
                let response = responder.respond(to: request.request)
                returning.add(1, ordering: .relaxed)
                completions.post(.init(connectionID: request.connectionID, requestID: request.requestID,
                                       response: response))
            case .admission(let request):
                let decision = responder.admission(for: request.request.head)
                returning.add(1, ordering: .relaxed)
                let completion: CompletionQueue.Completion = switch decision {
                case .admitted(let holder):
                    .init(connectionID: request.connectionID, requestID: request.requestID,
                          response: HTTPResponse(status: 100), admission: .admitted(holder: holder))
                case .refused(let response):
                    .init(connectionID: request.connectionID, requestID: request.requestID, response: response, admission: .refused)
                }
                completions.post(completion)
            case .webSocket(let mailbox):
                let (more, resume) = mailbox.run()
                returning.add(1, ordering: .relaxed)
                if resume { completions.attention(mailbox.connection.id) }
                if more { submit(mailbox) }
            }
        }
        condition.lock()
        running -= 1
        condition.broadcast()
        condition.unlock()
    }

    private func next(_ index: Int, afterJob: Bool) -> Work? {
        condition.lock()
        defer { condition.unlock() }
        if afterJob {
            returning.subtract(1, ordering: .relaxed)
        }
        startedAt[index] = 0
        // A worker that has just finished a job keeps running: it takes the next one at once.
        var mayTake = afterJob
        while !closed {
            let now = Self.now()
            if !jobs.isEmpty {
                let busy = runningLimit == 0 ? (count: 0, oldest: now) : runningWorkers(at: now)
                if mayTake || runningLimit == 0 || urgent > 0 || busy.count < runningLimit {
                    startedAt[index] = now
                    let job = jobs.removeFirst()
                    if job?.isBrief == false { urgent -= 1 }
                    // Brief jobs left behind need a sentinel, or they would wait for a running
                    // worker to come back however long it blocks. Other jobs woke a worker each
                    // when queued: a signal for them would be one wake-up too many.
                    if runningLimit > 0 && urgent == 0 && !jobs.isEmpty && sentinels == 0 && waiting > 0 { condition.signal() }
                    return job
                }
                if sentinels == 0 {
                    // Jobs wait for the running workers: sleep until the oldest of them counts
                    // as blocked, then look again.
                    sentinels += 1
                    waiting += 1
                    _ = condition.wait(until: Date(timeIntervalSinceNow: Double(busy.oldest + stallNanoseconds - now) / 1e9))
                    waiting -= 1
                    sentinels -= 1
                    continue
                }
            }
            mayTake = false
            waiting += 1
            condition.wait()
            waiting -= 1
        }
        return nil
    }

    /// The workers counted as running at `now` (their job younger than `stallNanoseconds`) and
    /// when the oldest of them took its job. Called with `condition` locked.
    private func runningWorkers(at now: UInt64) -> (count: Int, oldest: UInt64) {
        var count = 0
        var oldest = now
        for started in startedAt where started != 0 && now &- started < stallNanoseconds {
            count += 1
            oldest = min(oldest, started)
        }
        return (count, oldest)
    }

    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}

/// A growable FIFO ring buffer (the standard library has no deque).
struct RingBuffer<Element> {
    private var storage: [Element?] = []
    private var head = 0
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    mutating func append(_ element: Element) {
        if count == storage.count { grow() }
        storage[(head + count) % storage.count] = element
        count += 1
    }

    mutating func removeFirst() -> Element? {
        guard count > 0 else { return nil }
        let element = storage[head]
        storage[head] = nil
        head = (head + 1) % storage.count
        count -= 1
        return element
    }

    mutating func removeAll() {
        storage = []
        head = 0
        count = 0
    }

    private mutating func grow() {
        let newCapacity = max(16, storage.count * 2)
        var newStorage = [Element?](repeating: nil, count: newCapacity)
        for offset in 0..<count {
            newStorage[offset] = storage[(head + offset) % storage.count]
        }
        storage = newStorage
        head = 0
    }
}
