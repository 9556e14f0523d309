import FCM
import FCMEmulator
import Foundation

/// `FCMClient.send` back to back from `concurrency` tasks: OAuth2, the send gate, classification,
/// the HTTP/2 client. To the static nginx stub (the client's own cost) or to the FCM emulator
/// in this process (which validates every message, so it costs more).
enum FCMBenchmark {
    static let message = Array(
        #"{"android":{"notification":{"title_loc_args":["Alice"],"title_loc_key":"welcome_title"}},"apns":{"payload":{"aps":{"alert":{"title-loc-args":["Alice"],"title-loc-key":"WELCOME_TITLE"}}}},"token":"bk3RNwTe3H0:CI2k_HHwgIpoDKCIZvvDMExUdFQ3P1"}"#
            .utf8)

    static func run(
        _ configuration: FCMClient.Configuration, sends: Int, concurrency: Int, rounds: Int, name: String
    ) async throws -> [(name: String, value: Double)] {
        let client = try FCMClient(configuration: configuration)
        guard case .success = await client.send(message).outcome else { throw BenchError("the first send failed") }
        var rates: [Double] = []
        for _ in 0..<max(rounds, 1) {
            let start = ContinuousClock.now
            let failures = await withTaskGroup(of: Int.self) { group in
                for t in 0..<concurrency {
                    group.addTask {
                        var failed = 0
                        for _ in stride(from: t, to: sends, by: concurrency) {
                            if case .failure = await client.send(message).outcome { failed += 1 }
                        }
                        return failed
                    }
                }
                return await group.reduce(0, +)
            }
            guard failures == 0 else { throw BenchError("\(failures) sends failed") }
            rates.append(Double(sends) / KafkaBenchmark.seconds(ContinuousClock.now - start))
        }
        await client.shutdown()
        rates.sort()
        return [(name, rates[rates.count / 2]), (name + "_best", rates.last!)]
    }

    static func stub(
        baseURL: String, caFile: String, serviceAccount: String, sends: Int, concurrency: Int, rounds: Int, connections: Int
    ) async throws -> [(name: String, value: Double)] {
        var c = FCMClient.Configuration(serviceAccount: try ServiceAccount.load(path: serviceAccount))
        c.baseURL = baseURL
        c.caFile = caFile
        // A fixed number of connections, each on its own thread: what one or two of them carry.
        c.maxConnections = connections
        c.threads = connections
        let name = connections == 1 ? "fcm_sends_per_second_stub" : "fcm_sends_per_second_stub_\(connections)_connections"
        return try await run(c, sends: sends, concurrency: concurrency, rounds: rounds, name: name)
    }

    static func emulator(sends: Int, concurrency: Int, rounds: Int) async throws -> [(name: String, value: Double)] {
        let key = try EmulatorAccount(projectID: "bench-project", name: "bench")
        var e = FCMEmulator.Configuration(accounts: [key.email: key.privateKeyPEM])
        e.threads = 1
        let emulator = try await FCMEmulator.start(e)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let ca = directory.appendingPathComponent("ca.pem").path
        try emulator.tls.caPEM.write(toFile: ca, atomically: true, encoding: .utf8)
        var c = FCMClient.Configuration(serviceAccount: try ServiceAccount(json: Data(key.keyFileJSON(tokenURI: emulator.tokenURI))))
        c.baseURL = emulator.baseURL
        c.caFile = ca
        let figures = try await run(c, sends: sends, concurrency: concurrency, rounds: rounds, name: "fcm_sends_per_second_emulator")
        await emulator.stop()
        return figures
    }
}
