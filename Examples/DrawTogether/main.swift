import Foundation
import Synchronization
import Tandem

// DrawTogether: two or more people draw on a shared character grid over a Tandem group session.
//
//   DrawTogether --server http://127.0.0.1:8080 --container iCloud.com.example.draw --token TOKEN
//                (--invitation URL|CODE | --conversation ID [--invite] | --with USER_RECORD_NAME[,…])
//                [--draw "x,y,c;…"] [--linger SECONDS]
//
// --invite makes an activity invitation for the conversation, prints its link and join code and
// sends it into the conversation (a "Join" message); --invitation starts from such a link or
// code: it joins the conversation's session, or starts the drawing when none is live.
//
// Strokes go out as unreliable messages, then the whole canvas as one reliable message and into
// the session's state store, so a late joiner starts from the current picture. Without --draw,
// type "x y c" lines to paint; end with Ctrl-D.

func option(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: "--" + name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("DrawTogether: \(message)\n".utf8))
    exit(1)
}

guard let server = option("server").flatMap(URL.init(string:)), let token = option("token") else {
    fail("usage: DrawTogether --server URL --container ID --token TOKEN (--invitation URL|CODE | --conversation ID [--invite] | --with USER,…) [--draw \"x,y,c;…\"] [--linger SECONDS]")
}
let container = Container(identifier: option("container") ?? "iCloud.com.example.draw", serverURL: server, credentials: .userToken(token))
let activities = container.groupActivities
let activity = DrawTogether(title: "Sketchpad", fallbackURL: option("fallback").flatMap(URL.init(string:)))

/// The session's canvas, shared by the receiving tasks.
final class Board: Sendable {
    let canvas = Mutex(Canvas())
    func apply(_ stroke: Stroke) { canvas.withLock { $0.apply(stroke) } }
    func replace(_ new: Canvas) { canvas.withLock { $0 = new } }
    var current: Canvas { canvas.withLock { $0 } }
}

do {
    // The conversation: given, or picked/created with chosen people (the sharing controller).
    let conversation: String
    var opened: GroupSession<DrawTogether>?
    if let invitation = option("invitation") {
        // The link (or its code) from a "Join" message: join the conversation's session, or start one.
        let session = try await activities.open(invitation: invitation, as: DrawTogether.self)
        conversation = session.conversationID
        opened = session
    } else if let id = option("conversation") {
        conversation = id
        try await activities.setActiveConversation(id)
        if CommandLine.arguments.contains("--invite") {
            let invitation = try await activities.makeInvitation(for: activity, in: id)
            try await container.conversations.send(invitation, in: id)
            print("invitation \(invitation.url.absoluteString) code \(invitation.code)")
        }
        _ = try await activity.activate(on: activities)
    } else if let people = option("with") {
        guard case .success(let id) = try await GroupActivitySharingController(activity, client: activities)
            .share(with: people.split(separator: ",").map(String.init)) else { fail("sharing cancelled") }
        conversation = id
    } else {
        fail("give --conversation ID or --with USER_RECORD_NAME")
    }

    var found = opened
    if found == nil {
        for await session in DrawTogether.sessions(on: activities) where session.conversationID == conversation {
            found = session
            break
        }
    }
    guard let session = found else { fail("no session") }
    let strokes = GroupSessionMessenger(session: session, deliveryMode: .unreliable)
    let snapshots = GroupSessionMessenger(session: session)
    let board = Board()
    let strokeTask = Task { for await (stroke, _) in strokes.messages(of: Stroke.self) { board.apply(stroke) } }
    let canvasTask = Task { for await (canvas, _) in snapshots.messages(of: Canvas.self) { board.replace(canvas) } }
    try await session.join()
    if let saved = session.stateStore.value(forKey: "canvas", as: Canvas.self) { board.replace(saved) }
    print("joined \(conversation) with \(session.activeParticipants.count) participant(s)")

    func paint(_ list: [Stroke]) async throws {
        for stroke in list {
            board.apply(stroke)
            try await strokes.send(stroke)
        }
        let canvas = board.current
        try await snapshots.send(canvas)
        try await session.stateStore.set(canvas, forKey: "canvas")
    }

    if let script = option("draw") {
        let list = script.split(separator: ";").compactMap { item -> Stroke? in
            let parts = item.split(separator: ",")
            guard parts.count == 3, let x = Int(parts[0]), let y = Int(parts[1]) else { return nil }
            return Stroke(x: x, y: y, character: String(parts[2]))
        }
        try await paint(list)
    } else {
        while let line = readLine() {
            let parts = line.split(separator: " ")
            guard parts.count == 3, let x = Int(parts[0]), let y = Int(parts[1]) else { print("type: x y c"); continue }
            try await paint([Stroke(x: x, y: y, character: String(parts[2]))])
            print(board.current.text)
        }
    }
    if let linger = option("linger").flatMap(Double.init) { try await Task.sleep(nanoseconds: UInt64(linger * 1e9)) }
    print(board.current.text)
    strokeTask.cancel()
    canvasTask.cancel()
    await session.leave()
} catch {
    fail("\(error)")
}
