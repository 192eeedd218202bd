import Foundation
import Synchronization

/// A fixed set of threads running `HTTPResponder.respond(to:)` for queued requests, and the
/// `WebSocketResponder` for WebSocket mailboxes.
///
/// One queue guarded by one `NSCondition`: the service thread appends, an idle worker takes.
/// Threads are created once; nothing is allocated per request beyond the queue slot.
final class WorkerPool: @unchecked Sendable {
    /// A request waiting for a worker, and where its answer goes.
    struct Job: Sendable {
        var connectionID: UInt64
        var requestID: UInt64
        var request: HTTPRequest
    }

    /// What a worker takes from the queue.
    private enum Work {
        case request(Job)
        /// A WebSocket's events; each connection has at most one of these queued or running.
        case webSocket(WebSocketMailbox)
        /// A head to admit before its body is read (`HTTPResponder.admit`).
        case admission(Job)
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

    private let capacity: Int
    private let responder: any HTTPResponder
    private let completions: CompletionQueue

    init(workerCount: Int, capacity: Int, responder: any HTTPResponder, completions: CompletionQueue,
         serverID: Int) {
        self.capacity = capacity
        self.responder = responder
        self.completions = completions
        running = workerCount
        for index in 0..<workerCount {
            let thread = Thread { [self] in
                ServerThread.mark(serverID: serverID)
                self.work()
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
        // With fast responders a returning worker usually takes the job, which saves waking
        // (and later parking) another thread: two context switches per request.
        let wake = waiting > 0 && jobs.count > returning.load(ordering: .relaxed)
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

    private func work() {
        // The finished job (and its request, whose spooled body file goes with it) is released
        // before the worker waits for the next one, not when the next one comes.
        var afterJob = false
        while let current = next(afterJob: afterJob) {
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

    private func next(afterJob: Bool) -> Work? {
        condition.lock()
        defer { condition.unlock() }
        if afterJob {
            returning.subtract(1, ordering: .relaxed)
        }
        while jobs.isEmpty && !closed {
            waiting += 1
            condition.wait()
            waiting -= 1
        }
        return closed ? nil : jobs.removeFirst()
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
