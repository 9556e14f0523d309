import FCMEmulator
import Foundation
import Kafka
import TestSupport
import Testing

/// `run`, `replay` and `offsets` against tansu behind TLS (nginx's stream module: tansu 0.6.0
/// cannot serve TLS itself), with client certificates (mTLS), and with SASL/SCRAM over TLS
/// (`kafka_scram_front.py` between nginx and tansu: tansu 0.6.0's own SCRAM refuses every
/// login, its storage engines keep no credentials): docs/testing.md.
@Suite("secured clusters: TLS, mTLS, SASL/SCRAM, refused credentials and certificates (tansu, separate processes)", .serialized)
struct SecuredClusterEndToEndTests {
    @Test("over TLS: the worker delivers and commits, replay sends a range again, offsets shows the commits")
    func tls() async throws {
        let e = try await EndToEnd(partitions: 2, security: Tansu.Security(tls: true))
        #expect(e.clientProperties["security.protocol"] == "SSL")
        try await Self.deliverShowAndReplay(e, group: "tls")
        await e.stop()
    }

    /// The password reaches the worker, `offsets` and `replay` from the environment only, as
    /// docs/configuration.md documents (`PUSHBRIDGE_KAFKA_PROPERTIES_SASL_PASSWORD`); the config
    /// file names the mechanism and the user. The test's own clients log in with SCRAM-SHA-512.
    @Test(
        "SASL/SCRAM over TLS with the right password: the worker delivers and commits, replay sends a range again, offsets shows the commits",
        arguments: ["SCRAM-SHA-512", "SCRAM-SHA-256"])
    func scram(mechanism: String) async throws {
        let e = try await EndToEnd(partitions: 2, security: Tansu.Security(tls: true, authentication: true))
        #expect(e.clientProperties["security.protocol"] == "SASL_SSL")
        let (properties, environment) = Self.passwordFromEnvironment(e.clientProperties, mechanism: mechanism)
        try await Self.deliverShowAndReplay(e, group: "scram", kafkaProperties: properties, environment: environment)
        // The worker, offsets and replay went through the SCRAM front, with this mechanism.
        let logins = e.scramLog.split(separator: "\n").filter { $0.hasSuffix("\(mechanism) login of 'pushbridge' succeeded") }
        #expect(logins.count >= 3, "\(e.scramLog.suffix(2000))")
        #expect(!e.scramLog.contains("refused"), "\(e.scramLog.suffix(2000))")
        await e.stop()
    }

    /// A worker for `group` delivers 30 events and commits them; `offsets show` prints the commits;
    /// `replay` sends offsets 0–2 of each of the 2 partitions again. With `kafkaProperties` and
    /// `environment` for the worker and both commands.
    private static func deliverShowAndReplay(
        _ e: EndToEnd, group: String, kafkaProperties: [String: String]? = nil, environment: [String: String] = [:]
    ) async throws {
        let worker = try await e.startWorker(group: group, kafkaProperties: kafkaProperties, environment: environment)
        let tokens = try await e.produce(30, prefix: "s")
        #expect(try await e.waitUntilCommitted(group: group), "\(worker.output.suffix(2000))")
        await expectCleanExit(worker)
        #expect(e.acceptedTokens == Dictionary(uniqueKeysWithValues: tokens.map { ($0, 1) }))

        let config = try e.config(group: group, httpPort: try FreePort.next(), kafkaProperties: kafkaProperties)
        let show = try await e.pushbridge(["offsets", "show", "--config", config], environment: environment)
        #expect(show.status == 0, "\(show.output)")
        let committed = try await e.committed(group: group)
        #expect(committed.count == 2)
        for (partition, offset) in committed {
            let row = ["events", "\(partition)", "\(offset)"]
            #expect(
                show.output.split(separator: "\n").contains { Array($0.split(separator: " ").prefix(3).map(String.init)) == row }, "\(show.output)")
        }

        let replay = try await e.pushbridge(
            ["replay", "--config", config, "--topic", e.topic, "--from-offset", "0", "--to-offset", "3"], environment: environment)
        #expect(replay.status == 0, "\(replay.output.suffix(2000))")
        #expect(replay.output.contains("replay done: 6 events"), "\(replay.output.suffix(2000))")
        #expect(e.acceptedTokens.values.reduce(0, +) == 36, "3 events of each partition sent again")
    }

    /// `properties` without `sasl.password`, with `mechanism`, and the password (or `password`) as
    /// the environment variable that sets it.
    private static func passwordFromEnvironment(
        _ properties: [String: String], mechanism: String = "SCRAM-SHA-512", password: String? = nil
    ) -> (properties: [String: String], environment: [String: String]) {
        var properties = properties
        let secret = properties.removeValue(forKey: "sasl.password")
        properties["sasl.mechanisms"] = mechanism
        return (properties, ["PUSHBRIDGE_KAFKA_PROPERTIES_SASL_PASSWORD": password ?? secret ?? ""])
    }

    @Test("mTLS: with the client certificate the broker's side asks for, the worker delivers and commits")
    func mutualTLS() async throws {
        let e = try await EndToEnd(partitions: 1, security: Tansu.Security(tls: true, clientCertificates: true))
        #expect(e.clientProperties["ssl.certificate.location"] != nil && e.clientProperties["ssl.key.location"] != nil)
        let worker = try await e.startWorker(group: "mtls")
        let tokens = try await e.produce(10, prefix: "m")
        #expect(try await e.waitUntilCommitted(group: "mtls"), "\(worker.output.suffix(2000))")
        await expectCleanExit(worker)
        #expect(Set(e.acceptedTokens.keys) == Set(tokens))
        await e.stop()
    }

    /// The SCRAM front refuses a wrong password, as Kafka does (SASL_AUTHENTICATION_FAILED, then
    /// it closes the connection): for librdkafka that is `_AUTHENTICATION`, which it would retry
    /// for ever. The broker has a real user, whom the test's own clients log in as; an unknown
    /// user is refused alike.
    @Test("SASL/SCRAM over TLS with a wrong password: run, replay and offsets exit 1 naming the refusal")
    func refusedCredentials() async throws {
        let e = try await EndToEnd(partitions: 1, security: Tansu.Security(tls: true, authentication: true))
        #expect(e.clientProperties["security.protocol"] == "SASL_SSL")
        try await e.produce(3, prefix: "r")  // the right password gets in
        let (properties, environment) = Self.passwordFromEnvironment(e.clientProperties, password: "wrong")
        let config = try e.config(group: "sasl", httpPort: try FreePort.next(), kafkaProperties: properties)
        var unknownUser = properties
        unknownUser["sasl.username"] = "nobody"
        let unknownConfig = try e.config(group: "sasl-unknown", httpPort: try FreePort.next(), kafkaProperties: unknownUser)
        let runs = [
            (["run"], config, environment), (["offsets", "show"], config, environment),
            (["replay", "--topic", e.topic, "--from-beginning", "--dry-run"], config, environment),
            (["run"], unknownConfig, ["PUSHBRIDGE_KAFKA_PROPERTIES_SASL_PASSWORD": "secret"]),
        ]
        for (command, config, environment) in runs {
            let (status, output) = try await e.pushbridge(command + ["--config", config], timeout: .seconds(60), environment: environment)
            #expect(status == 1, "\(command[0]): \(output.suffix(2000))")
            // The command's last word on standard error, not only the log lines before it.
            let verdict = output.split(separator: "\n").first { $0.hasPrefix("pushbridge: ") }
            #expect(verdict?.contains("the cluster refuses this client: ") == true, "\(command[0]): \(output.suffix(2000))")
            #expect(
                verdict?.contains(
                    "SASL authentication error: Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512"
                ) == true,
                "\(command[0]): \(output.suffix(2000))")
        }
        #expect(e.emulator.messages.isEmpty)
        #expect(e.scramLog.contains("login of 'pushbridge' refused: invalid client proof"), "\(e.scramLog.suffix(2000))")
        #expect(e.scramLog.contains("login of 'nobody' refused: unknown user"), "\(e.scramLog.suffix(2000))")
        await e.stop()
    }

    @Test("a broker certificate from a CA the client does not trust: run, replay and offsets exit 1 naming the verification")
    func untrustedCertificate() async throws {
        let e = try await EndToEnd(partitions: 1, security: Tansu.Security(tls: true))
        let other = e.directory.appendingPathComponent("other-ca")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        var properties = e.clientProperties
        properties["ssl.ca.location"] = try TestCertificates.generate(in: other).caFile
        let config = try e.config(group: "untrusted", httpPort: try FreePort.next(), kafkaProperties: properties)
        for command in [["run"], ["offsets", "show"], ["replay", "--topic", e.topic, "--from-beginning", "--dry-run"]] {
            let (status, output) = try await e.pushbridge(command + ["--config", config], timeout: .seconds(60))
            #expect(status == 1, "\(command[0]): \(output.suffix(2000))")
            // The command's last word on standard error, not only the log lines before it.
            let verdict = output.split(separator: "\n").first { $0.hasPrefix("pushbridge: ") }
            #expect(verdict?.contains("the cluster refuses this client: ") == true, "\(command[0]): \(output.suffix(2000))")
            #expect(verdict?.contains("certificate verify failed") == true, "\(command[0]): \(output.suffix(2000))")
        }
        await e.stop()
    }
}
