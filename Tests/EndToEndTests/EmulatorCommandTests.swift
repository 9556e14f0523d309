import FCM
import Foundation
import TestSupport
import Testing

@Suite("pushbridge emulator (a separate process)")
struct EmulatorCommandTests {
    @Test("serves FCM to a client configured only by the files it writes, injects faults, stops on SIGTERM")
    func emulator() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pb-emulator-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = dir.appendingPathComponent("emulator.log").path
        let state = dir.appendingPathComponent("state").path
        let process = try ChildProcess(
            executable: pushbridgeExecutable,
            arguments: [
                "emulator", "--state-dir", state, "--faults", #"{"token_prefixes": {"dead-": "UNREGISTERED"}}"#,
                "--record", dir.appendingPathComponent("sent.jsonl").path,
            ],
            logFile: log)
        var baseURL: String?
        for _ in 0..<300 where baseURL == nil {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.contains("base URL") }) {
                baseURL = line.split(separator: " ").first { $0.hasPrefix("https://") }.map(String.init)
            }
            if baseURL == nil { try await Task.sleep(for: .milliseconds(50)) }
        }
        let url = try #require(baseURL, "\(String(describing: try? String(contentsOfFile: log, encoding: .utf8)))")

        var configuration = FCMClient.Configuration(serviceAccount: try ServiceAccount.load(path: "\(state)/service-account.json"))
        configuration.baseURL = url
        configuration.caFile = "\(state)/ca.pem"
        let client = try FCMClient(configuration: configuration)
        let message = Array(#"{"android":{"notification":{"title_loc_key":"welcome_title","title_loc_args":["Alice"]}},"token":"live-token-1"}"#.utf8)
        let ok = await client.send(message)
        #expect(try ok.outcome.get().hasPrefix("projects/demo-project/messages/"))
        let dead = await client.send(Array(#"{"token":"dead-token-1","data":{"a":"b"}}"#.utf8))
        guard case .failure(let error) = dead.outcome else {
            Issue.record("a dead token was accepted")
            return
        }
        #expect(error.code == .unregistered)
        await client.shutdown()

        let pid = try #require(process.programPID)
        kill(pid, SIGTERM)
        #expect(await process.wait(timeout: .seconds(20)) == 0)
        let output = try String(contentsOfFile: log, encoding: .utf8)
        #expect(output.contains("stopped: 1 messages accepted, 2 requests"), "\(output)")
        let recorded = try String(contentsOfFile: dir.appendingPathComponent("sent.jsonl").path, encoding: .utf8)
        #expect(recorded.contains("live-token-1") && !recorded.contains("dead-token-1"))
        // Each accepted message with what a device would ignore in it: nothing, for this one.
        #expect(recorded.contains(#""device_notes":[]"#), "\(recorded)")
    }
}
