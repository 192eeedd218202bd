import Foundation
import Tandem

/// The activity: drawing together on one character grid.
struct DrawTogether: GroupActivity {
    static let activityIdentifier = "com.example.drawtogether"
    var title: String
    /// Where people outside the conversation are sent when they open an invitation link.
    var fallbackURL: URL?
    var metadata: GroupActivityMetadata { GroupActivityMetadata(title: title, type: .createTogether, fallbackURL: fallbackURL) }
}

/// One cell painted: sent unreliably while drawing.
struct Stroke: Codable, Sendable {
    var x: Int
    var y: Int
    var character: String
}

/// The whole grid: sent reliably after a burst of strokes (repairs lost strokes) and kept in
/// the session's state store for late joiners.
struct Canvas: Codable, Sendable, Equatable {
    static let width = 24
    static let height = 8
    var rows = Array(repeating: String(repeating: ".", count: Canvas.width), count: Canvas.height)

    mutating func apply(_ stroke: Stroke) {
        guard (0..<Self.height).contains(stroke.y), (0..<Self.width).contains(stroke.x), let character = stroke.character.first else { return }
        var row = Array(rows[stroke.y])
        row[stroke.x] = character
        rows[stroke.y] = String(row)
    }

    var text: String { rows.joined(separator: "\n") }
}
