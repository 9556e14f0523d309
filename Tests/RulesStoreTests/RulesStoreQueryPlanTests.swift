import Rules
import SQLite
import TestSupport
import Testing

@testable import RulesStore

@Suite("The rules store's cap queries read through indexes")
struct RulesStoreQueryPlanTests {
    /// SQLite's plan for `sql` on the store's schema, one line per step (`EXPLAIN QUERY PLAN`).
    static func plan(_ sql: String, in path: String) throws -> [String] {
        let statement = try SQLiteConnection(path: path, readOnly: true).prepare("EXPLAIN QUERY PLAN " + sql)
        var steps: [String] = []
        while try statement.step() { steps.append(statement.text(3)) }
        return steps
    }

    @Test("a key with a user reads its rows of the user index; a [device] key its users' and its own rows; none scans a table")
    func plans() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("rules.sqlite")
        _ = try RulesStore(path: path)
        let device = DeviceKey(target: "fid:a")
        let keys = [
            CapKey(user: .some("u"), category: .some("social"), mapping: nil, device: nil),
            CapKey(user: .some(nil), category: nil, mapping: "chat", device: nil),
            CapKey(user: .some("u"), category: nil, mapping: nil, device: device),
        ]
        for key in keys {
            let steps = try Self.plan(RulesConnection.keySQL(key), in: path)
            #expect(steps == ["SEARCH t USING INDEX notifications_user (user=? AND latest>?)"], "\(key): \(steps)")
        }
        let steps = try Self.plan(RulesConnection.keySQL(CapKey(user: nil, category: nil, mapping: nil, device: device)), in: path)
        #expect(
            steps.filter { $0.hasPrefix("SEARCH") } == [
                "SEARCH du USING PRIMARY KEY (device=?)", "SEARCH t USING INDEX notifications_user (user=? AND latest>?)",
                "SEARCH sd USING PRIMARY KEY (device=?)", "SEARCH t USING INTEGER PRIMARY KEY (rowid=?)",
            ], "\(steps)")
        #expect(!steps.contains { $0.hasPrefix("SCAN") }, "\(steps)")
    }
}
