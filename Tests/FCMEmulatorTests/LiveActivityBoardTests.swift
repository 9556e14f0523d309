import JSON
import Testing

@testable import FCMEmulator

/// The emulator's device model of Live Activities (docs/emulator.md, *The Live Activity
/// board*): Apple's rules for older timestamps and ended activities.
@Suite("Live Activity board")
struct LiveActivityBoardTests {
    static func message(_ token: String, _ event: String, _ timestamp: Int64, state: String) -> JSONValue {
        let text =
            #"{"token":"fcm","apns":{"live_activity_token":"\#(token)","payload":{"aps":{"event":"\#(event)","timestamp":\#(timestamp),"content-state":{"s":"\#(state)"}}}}}"#
        return try! JSONParser.parse(Array(text.utf8))
    }

    @Test("an older update is ignored, an equal or newer one applied, and nothing after an end")
    func rules() {
        var board = LiveActivityBoard()
        board.apply(Self.message("la", "update", 100, state: "a"))
        board.apply(Self.message("la", "update", 99, state: "older"))
        board.apply(Self.message("la", "update", 100, state: "same second"))
        board.apply(Self.message("la", "end", 101, state: "done"))
        board.apply(Self.message("la", "update", 102, state: "after end"))
        let a = board.activities["la"]
        #expect(a?.event == "end" && a?.timestamp == 101 && a?.applied == 3 && a?.ignored == 2)
        #expect(a?.contentState == .object([("s", .string("done"))]))
    }

    @Test("activities are apart by token; a message without a Live Activity token is not the board's")
    func apart() throws {
        var board = LiveActivityBoard()
        board.apply(Self.message("one", "update", 5, state: "x"))
        board.apply(Self.message("two", "start", 1, state: "y"))
        board.apply(try JSONParser.parse(Array(#"{"token":"fcm","apns":{"payload":{"aps":{"alert":"hi"}}}}"#.utf8)))
        #expect(board.activities.keys.sorted() == ["one", "two"])
        #expect(board.activities["two"]?.event == "start")
    }
}
