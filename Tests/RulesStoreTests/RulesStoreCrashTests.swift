import Foundation
import Rules
import RulesStore
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("The rules store when its writer is killed (SIGKILL)")
struct RulesStoreCrashTests {
    @Test("killed mid-run at random moments, the file holds whole batches: the offset and the facts before it, nothing after")
    func killed() async throws {
        let writer = Repository.root + "/.build/debug/rules-store-crash-writer"
        try #require(FileManager.default.isExecutableFile(atPath: writer), "built by swift build --build-tests")
        let folder = try TemporaryFolder()
        var rng = SplitMix64(seed: 55)
        for round in 0..<3 {
            let path = folder.path("crash-\(round).sqlite")
            let log = folder.path("crash-\(round).log")
            let child = try ChildProcess(executable: writer, arguments: [path], logFile: log)
            // After 3 to 40 batches committed, at a moment the writer is mid-batch or mid-commit.
            let after = 3 + Int(rng.next() % 38)
            child.signal(SIGKILL, when: { (try? String(contentsOfFile: log, encoding: .utf8))?.contains("applied \(after * 500)\n") == true })
            let status = await child.wait(timeout: .seconds(120))
            #expect(status != nil && status != 0, "killed, not ended: \(ChildProcessLog.tail(log))")
            let store = try RulesStore(path: path)
            let next = try #require(try store.nextOffset(partition: 0))
            #expect(next % 500 == 0 && next >= Int64(after * 500), "a batch boundary at or after the last one reported: \(next)")
            let batches = UInt64(next / 500)
            let found = try store.notifications(
                of: CapKey(user: .some("crash"), category: nil, mapping: nil, device: nil), countingAfter: .min, policy: RulesPolicy(sendLimit: 0))
            #expect(found.count == Int(batches) * 250, "every reservation before the offset, none after")
            for (n, _) in found {
                #expect(n.high < batches)
                #expect(try store.state(of: n)?.status == (n.high + 1 < batches ? .sent : .reserved), "\(n.high) of \(batches)")
            }
            #expect(try store.state(of: NotificationID(high: batches, low: 0)) == nil)
            #expect(try store.state(of: NotificationID(high: batches - 1, low: 249))?.status == .reserved)
        }
    }
}

/// The end of a child's log, for a failure message.
enum ChildProcessLog {
    static func tail(_ file: String) -> String {
        String(((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").suffix(500))
    }
}
