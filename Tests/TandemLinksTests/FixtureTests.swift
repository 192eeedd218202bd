import Testing
import TandemLinks

/// Every published file of `Fixtures/aasa` parses or is refused with a precise position, and
/// URLs against the parseable ones decide as the rules of spec §2.3–§2.4 say.
@Suite struct FixtureTests {
    /// File → "ok" or where the error is (line and column for JSON text, JSON path for values).
    static let outcomes: [(file: String, outcome: String)] = [
        ("001.json", "ok"),
        ("002.json", "ok"),
        ("003.json", "ok"),
        ("004.json", "ok"),
        ("005.json", "ok"),
        ("006.json", "ok"),
        ("007.json", "ok"),
        ("008.json", "ok"),
        ("009.json", "ok"),
        ("010.json", "ok"),
        ("011.json", "applinks.details"),
        ("012.json", "ok"),
        ("013.json", "applinks.details[0].paths[0]"),
        ("014.json", "ok"),
        ("015.json", "ok"),
        ("016.json", "ok"),
        ("017.json", "ok"),
        ("018.json", "ok"),
        ("019.json", "ok"),
        ("020.json", "ok"),
        ("021.json", "ok"),
        ("022.json", "ok"),
        ("023.json", "ok"),
        ("024.json", "ok"),
        ("025.json", "ok"),
        ("026.json", "ok"),
        ("027.json", "ok"),
        ("028.json", "ok"),
        ("029.json", "ok"),
        ("030.json", "ok"),
        ("031.json", "ok"),
        ("032.json", "ok"),
        ("033.json", "ok"),
        ("034.json", "ok"),
        ("035.json", "ok"),
        ("036.json", "ok"),
        ("037.json", "ok"),
        ("038.json", "ok"),
        ("039.json", "ok"),
        ("040.txt", "line 1, column 17"),
        ("041.txt", "line 11, column 14"),
        ("042.txt", "line 5, column 5"),
        ("043.txt", "line 8, column 13"),
        ("044.txt", "line 6, column 88"),
        ("045.txt", "line 1, column 1"),
        ("046.txt", "line 22, column 8"),
        ("047.txt", "line 7, column 25"),
        ("048.txt", "line 6, column 16"),
        ("049.txt", "line 11, column 24"),
        ("050.txt", "line 20, column 21"),
        ("051.txt", "line 6, column 18"),
        ("052.txt", "line 25, column 23"),
        ("053.txt", "line 7, column 35"),
        ("054.txt", "line 14, column 43"),
        ("055.txt", "line 1, column 175"),
        ("056.txt", "line 1, column 4"),
        ("057.txt", "line 1, column 1"),
        ("058.txt", "line 1, column 1"),
        ("059.txt", "line 1, column 1"),
        ("060.txt", "line 1, column 1"),
        ("061.txt", "line 2, column 0"),
        ("062.txt", "line 1, column 0"),
        ("063.txt", "line 1, column 4"),
        ("064.txt", "line 1, column 1"),
    ]

    @Test(arguments: outcomes.map(\.file))
    func fileParsesOrIsRefusedPrecisely(file: String) throws {
        let expected = Self.outcomes.first { $0.file == file }!.outcome
        let bytes = try Fixtures.bytes(file)
        do {
            _ = try AssociationFile.parse(bytes)
            #expect(expected == "ok")
        } catch {
            #expect("\(error.location)" == expected, "\(error)")
            #expect(Linter.lint(bytes).first?.severity == .error)
        }
    }

    /// `T000000007.org.example.app8` for app 8 of team 7, as the fixtures spell app IDs.
    static func app(_ n: Int, _ team: Int) -> String {
        "T" + String(repeating: "0", count: 9 - String(team).count) + "\(team).org.example.app\(n)"
    }

    /// (file, app, URL, decision)
    static let decisions: [(file: String, app: String, url: String, expected: String)] = [
        ("001.json", app(1, 1), "https://example.com/anything/at/all?x#y", "open"),
        ("002.json", app(2, 2), "/share/list/42", "open"),
        ("002.json", app(2, 2), "/share/list", "no match"),
        ("003.json", app(3, 3), "/", "open"),
        ("004.json", app(4, 4), "/api/v1/user", "blocked"),
        ("004.json", app(4, 4), "/home", "open"),
        ("005.json", app(5, 5), "/login", "open"),
        ("005.json", app(5, 5), "/login/sso", "open"),
        ("005.json", app(5, 5), "/api/x", "blocked"),
        ("006.json", app(7, 6), "/_/static", "blocked"),
        ("006.json", app(7, 6), "/room/1", "open"),
        ("007.json", app(8, 7), "/a/b", "blocked"),
        // Every path starts with "/", so "NOT */*" blocks every URL and "*" never decides.
        ("007.json", app(8, 7), "/a", "blocked"),
        ("008.json", "FIXME_APPLE_TEAM_ID.me.roboroads.framed", "/join?code=1", "open"),
        // "/join?*" was meant for a query, but in a path pattern "?" is one character.
        ("008.json", "FIXME_APPLE_TEAM_ID.me.roboroads.framed", "/joinX", "open"),
        ("008.json", "FIXME_APPLE_TEAM_ID.me.roboroads.framed", "/join", "open"),
        ("009.json", app(10, 8), "/account/list/analysis", "open"),
        ("010.json", app(11, 9), "/anything", "no match"),
        ("012.json", app(13, 11), "/", "no match"),
        ("014.json", app(14, 12), "/x", "open"),
        ("015.json", app(15, 13), "/clip/1", "open"),
        ("016.json", app(1, 1), "/", "no match"),
        ("017.json", app(20, 16), "/x", "open"),
        ("018.json", app(21, 17), "/register/confirm/abc", "open"),
        ("018.json", app(21, 17), "/register", "no match"),
        ("019.json", app(1, 1), "/", "no match"),
        // app26's legacy entry comes first and its "NOT /r/" decides; the components entry
        // after it puts its exclude of /r/ behind "/r/*", where it never applies (linted).
        ("022.json", app(26, 21), "/r/", "blocked"),
        ("022.json", app(26, 21), "/meet/123", "open"),
        ("023.json", app(30, 24), "/enroll/x", "open"),
        ("024.json", "DEVELOPMENT_TEAM.PRODUCT_BUNDLE_IDENTIFIER", "/join/a?channel=1", "open"),
        ("024.json", "DEVELOPMENT_TEAM.PRODUCT_BUNDLE_IDENTIFIER", "/join/a", "no match"),
        ("025.json", "com.purchaseplan.ios", "/anything", "open"),
        ("026.json", app(49, 18), "/buy/x#no_universal_links", "blocked"),
        ("026.json", app(50, 18), "/skins/install", "open"),
        ("026.json", app(49, 18), "/help/website/x", "blocked"),
        ("026.json", app(49, 18), "/help/a?articleNumber=1234", "open"),
        ("026.json", app(49, 18), "/help/a?articleNumber=12", "no match"),
        ("027.json", app(52, 28), "/ChessColors/x?pieceLight=AABBCC&pieceDark=001122&squareLight=ffffff&squareDark=000000", "open"),
        ("027.json", app(52, 28), "/chesscolors/x?pieceLight=AABBCG&pieceDark=001122&squareLight=ffffff&squareDark=000000", "no match"),
        ("027.json", app(53, 28), "/syncsong/spotify-callback/x?code=1&state=2", "open"),
        ("027.json", app(53, 28), "/syncsong/spotify-callback/x?code=1", "no match"),
        ("028.json", app(55, 29), "/app-dev/x", "open"),
        ("029.json", app(56, 30), "/oauth2/callback", "blocked"),
        ("029.json", app(56, 30), "/feed", "open"),
        ("030.json", app(57, 31), "/join", "open"),
        ("030.json", app(57, 31), "/other", "blocked"),
        ("031.json", app(57, 31), "/x#no_universal_links", "blocked"),
        ("031.json", app(57, 31), "/join/abc", "open"),
        ("032.json", app(58, 32), "/api/x", "blocked"),
        ("032.json", app(58, 32), "/#login", "blocked"),
        ("032.json", app(58, 32), "/#poll/3", "open"),
        ("032.json", app(58, 32), "/share?pollID=3", "open"),
        ("032.json", app(58, 32), "/share?pollID=3#x", "no match"),
        ("033.json", app(60, 35), "/album/1", "open"),
        ("033.json", app(60, 35), "/albums", "no match"),
        ("034.json", app(61, 36), "/signin/x", "open"),
        ("035.json", app(71, 37), "/spritepencil/importfromapp", "open"),
        ("035.json", app(70, 37), "/spritepencil/importfromapp", "no match"),
        ("036.json", app(76, 40), "/ios/beta", "blocked"),
        ("036.json", app(76, 40), "/ios/app", "open"),
        ("037.json", app(77, 41), "/#/settings", "no match"),
        ("038.json", app(78, 42), "/code-reviews/review-md", "blocked"),
        ("038.json", app(78, 42), "/pr-review/gitlab/a/b/c", "open"),
        ("039.json", app(80, 43), "/#/tokens/eth", "open"),
        ("039.json", app(80, 43), "/swap/eth", "open"),
        ("039.json", app(80, 43), "/settings", "no match"),
    ]

    @Test(arguments: decisions.indices)
    func urlDecision(index: Int) throws {
        let row = Self.decisions[index]
        #expect(try Fixtures.verdict(try Fixtures.bytes(row.file), row.url, app: row.app) == row.expected, "\(row)")
    }
}
