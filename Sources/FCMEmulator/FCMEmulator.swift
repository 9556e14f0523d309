import Foundation
import NIOSSL
import _CryptoExtras

/// A local stand-in for FCM HTTP v1 and Google's OAuth2 token endpoint, faithful to the
/// documented API: HTTPS with HTTP/2, payload validation with FCM's error bodies, JWT
/// verification, fault injection, and a record of every accepted message.
///
/// ```swift
/// let emulator = try await FCMEmulator.start(.init(accounts: ["svc@p.iam.gserviceaccount.com": publicKeyPEM]))
/// // point the client at emulator.baseURL, trust emulator.tls.caPEM, token_uri = emulator.tokenURI
/// emulator.messages  // what was delivered, each with its deviceNotes (what a phone would ignore)
/// await emulator.stop()
/// ```
///
/// Routes: `POST /v1/projects/{p}/messages:send`, `POST /token`, and for tests `GET
/// /admin/messages`, `GET /admin/attempts`, `GET /admin/live-activities` (``LiveActivityBoard``), `GET /admin/stats`, `POST /admin/faults` (an
/// ``EmulatorFaults`` JSON), `POST /admin/reset`, `POST /admin/revoke-tokens`, `POST /admin/goaway`.
public final class FCMEmulator: Sendable {
    public struct Configuration: Sendable {
        /// Service accounts allowed to get tokens: client_email → public key PEM (an RSA
        /// private key PEM is accepted too; only its public half is used).
        public var accounts: [String: String]
        public var host = "127.0.0.1"
        /// 0 picks a free port.
        public var port = 0
        /// Certificates to serve; nil generates a CA and a server certificate in memory.
        public var tls: EmulatorTLS?
        /// How long issued access tokens live. Default 1 h, as Google's.
        public var tokenLifetime: Duration = .seconds(3600)
        public var faults = EmulatorFaults()
        /// Also append accepted messages to this file as JSON lines.
        public var recordPath: String?
        /// Event loop threads. Default 1.
        public var threads = 1

        public init(accounts: [String: String]) {
            self.accounts = accounts
        }
    }

    public let tls: EmulatorTLS
    private let core: EmulatorCore
    private let server: EmulatorServer
    public let host: String

    public static func start(_ configuration: Configuration) async throws -> FCMEmulator {
        var keys: [String: _RSA.Signing.PublicKey] = [:]
        for (email, pem) in configuration.accounts {
            if let key = try? _RSA.Signing.PublicKey(pemRepresentation: pem) {
                keys[email] = key
            } else if let key = try? _RSA.Signing.PrivateKey(pemRepresentation: pem) {
                keys[email] = key.publicKey
            } else {
                throw EmulatorError("the key for \(email) is not an RSA public or private key in PEM form")
            }
        }
        let tls = try configuration.tls ?? EmulatorTLS.generate()
        var tlsConfiguration = TLSConfiguration.makeServerConfiguration(
            certificateChain: try NIOSSLCertificate.fromPEMBytes(Array(tls.certificatePEM.utf8)).map { .certificate($0) },
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(tls.privateKeyPEM.utf8), format: .pem)))
        tlsConfiguration.applicationProtocols = ["h2", "http/1.1"]
        let context = try NIOSSLContext(configuration: tlsConfiguration)
        // The token URI is only known once the port is; the verifier accepts the loopback forms.
        let core = try EmulatorCore(
            verifier: JWTVerifier(keys: keys, audiences: []), tokenLifetime: configuration.tokenLifetime,
            faults: configuration.faults, recordPath: configuration.recordPath)
        let server = try await EmulatorServer.start(
            host: configuration.host, port: configuration.port, tls: context, core: core, threads: configuration.threads)
        let port = server.port
        core.setVerifier(
            JWTVerifier(
                keys: keys,
                audiences: [
                    "https://\(configuration.host):\(port)/token", "https://localhost:\(port)/token", "https://127.0.0.1:\(port)/token",
                ]))
        return FCMEmulator(tls: tls, core: core, server: server, host: configuration.host)
    }

    private init(tls: EmulatorTLS, core: EmulatorCore, server: EmulatorServer, host: String) {
        self.tls = tls
        self.core = core
        self.server = server
        self.host = host
    }

    public var port: Int { server.port }
    /// What the FCM client's base URL should be.
    public var baseURL: String { "https://\(host):\(port)" }
    /// What a service account's `token_uri` should be.
    public var tokenURI: String { "\(baseURL)/token" }

    /// Accepted messages, in arrival order.
    public var messages: [RecordedMessage] { core.messages }
    /// What phones' Live Activities show after the accepted messages.
    public var liveActivities: LiveActivityBoard { LiveActivityBoard(core.messages) }
    /// Every `messages:send` request and its answer, in arrival order.
    public var attempts: [RecordedAttempt] { core.attempts }
    /// Access tokens issued so far.
    public var tokensIssued: Int { core.tokensIssued }
    /// The most requests it has answered at once on one connection (at most 100, the
    /// `SETTINGS_MAX_CONCURRENT_STREAMS` it announces, as FCM's front end).
    public var maxConcurrentStreams: Int { core.maxConcurrentStreams }

    /// When the emulator started, in seconds since the Unix epoch: the zero of every record's `time`.
    public var startedEpochSeconds: Double { core.startedEpochSeconds }

    public func setFaults(_ faults: EmulatorFaults) { core.setFaults(faults) }
    /// Invalidates every access token issued, so the next sends get 401 UNAUTHENTICATED.
    public func revokeTokens() { core.revokeTokens() }

    public func stop() async { await server.stop() }
}
