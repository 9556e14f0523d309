import ArgumentParser
import FCMEmulator
import Foundation
import UnixSignals

struct EmulatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "emulator",
        abstract: "Run the FCM emulator: FCM HTTP v1 and its OAuth2 token endpoint, over HTTPS + HTTP/2.",
        discussion: """
            For trying pushbridge (or any FCM client) without Google. It validates each message \
            field by field as FCM does (fid and token, topics, conditions, proto3 JSON rules), \
            answers with the error bodies FCM documents or was seen to send, allows 100 streams \
            per connection as FCM's front end does, verifies the OAuth2 JWT, records what it \
            accepted, and injects faults on request. Nothing is delivered. docs/emulator.md lists \
            every behaviour with its source.

            It writes, into --state-dir, a CA to trust (ca.pem) and a service-account key file \
            whose token_uri points at the emulator (service-account.json): give both to a worker \
            (fcm.ca_file, fcm.service_account, fcm.endpoint = the printed base URL). Runs until \
            SIGINT or SIGTERM.

            Faults (JSON, also POST /admin/faults): {"token_prefixes": {"dead-": "UNREGISTERED", \
            "bad-": "INVALID_ARGUMENT"}, "burst": {"status": 503, "count": 20, "retry_after": 2}, \
            "rate": {"status": 500, "probability": 0.05}, "quotas": {"device": {"limit": 240, \
            "window_ms": 60000}, "topic": {"limit": 100, "window_ms": 60000}, "project": {"limit": \
            600000, "window_ms": 60000}}, "latency_ms": 50, "drop_connection_every": 1000, \
            "refuse_stream_every": 500}. A 429 burst or the project quota answers as FCM's project \
            quota; a device's or topic's quota as theirs.

            Admin: GET /admin/messages, /admin/attempts, /admin/stats; POST /admin/faults, \
            /admin/reset, /admin/revoke-tokens, /admin/goaway.

            Examples:
              pushbridge emulator --port 8443
              pushbridge emulator --faults '{"token_prefixes": {"dead-": "UNREGISTERED"}}' --record sent.jsonl
            """
    )

    @Option(name: .long, help: "Port to listen on; 0 picks a free one (printed).")
    var port = 0

    @Option(name: .long, help: "Address to listen on.")
    var host = "127.0.0.1"

    @Option(name: .long, help: "Where ca.pem and service-account.json are written.")
    var stateDir = ".pushbridge-emulator"

    @Option(name: .long, help: "Faults as JSON (see above).")
    var faults: String?

    @Option(name: .long, help: "A file with the faults as JSON.")
    var faultsFile: String?

    @Option(name: .long, help: "Append every accepted message to this file as JSON lines.")
    var record: String?

    @Option(name: .long, help: "Lifetime of the access tokens it issues, in seconds.")
    var tokenLifetime = 3600

    func validate() throws {
        if faults != nil && faultsFile != nil { throw ValidationError("give --faults or --faults-file, not both") }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0…65535") }
        guard tokenLifetime > 0 else { throw ValidationError("--token-lifetime must be positive") }
    }

    func run() async throws {
        var faultBytes: [UInt8]?
        if let faults { faultBytes = Array(faults.utf8) }
        if let faultsFile {
            guard let data = FileManager.default.contents(atPath: faultsFile) else { throw ValidationError("cannot read \(faultsFile)") }
            faultBytes = Array(data)
        }
        let account = try EmulatorAccount()
        var configuration = FCMEmulator.Configuration(accounts: [account.email: account.privateKeyPEM])
        configuration.host = host
        configuration.port = port
        configuration.recordPath = record
        configuration.tokenLifetime = .seconds(tokenLifetime)
        if let faultBytes {
            do {
                configuration.faults = try EmulatorFaults(json: faultBytes)
            } catch {
                throw ValidationError("faults: \(error)")
            }
        }
        let signals = await UnixSignalsSequence(trapping: .sigint, .sigterm)
        let emulator = try await FCMEmulator.start(configuration)
        try FileManager.default.createDirectory(atPath: stateDir, withIntermediateDirectories: true)
        let dir = URL(fileURLWithPath: stateDir).standardizedFileURL.path
        try emulator.tls.caPEM.write(toFile: "\(dir)/ca.pem", atomically: true, encoding: .utf8)
        try account.writeKeyFile(to: "\(dir)/service-account.json", tokenURI: emulator.tokenURI)
        // Written unbuffered: whoever started it may be waiting for the base URL.
        FileHandle.standardOutput.write(
            Data(
                """
                FCM emulator listening
                  base URL         \(emulator.baseURL)        (fcm.endpoint)
                  token URI        \(emulator.tokenURI)
                  CA               \(dir)/ca.pem        (fcm.ca_file)
                  service account  \(dir)/service-account.json        (fcm.service_account; project \(account.projectID))
                  admin            \(emulator.baseURL)/admin/messages  /admin/attempts  /admin/stats
                Try: curl --cacert \(dir)/ca.pem \(emulator.baseURL)/admin/stats
                Ctrl-C stops it.

                """.utf8))
        for await _ in signals { break }
        await emulator.stop()
        print("stopped: \(emulator.messages.count) messages accepted, \(emulator.attempts.count) requests")
    }
}
