import Foundation
import ProcessHarness
import Synchronization

/// tansu, an independent Kafka-protocol broker, as a child process on a free loopback port (see
/// docs/testing.md). In-memory storage by default; with ``Storage/s3(endpoint:bucket:)`` its
/// data and committed offsets survive ``restart(hard:downtime:)``. With ``Security`` it sits
/// behind TLS (``KafkaTLSFront``, optionally mTLS) and/or SASL/SCRAM (``KafkaSCRAMFront``):
/// client → TLS front → SCRAM front → tansu. Stopped, fronts and all, when released.
///
/// - Important: clients need librdkafka ≥ 2.1 at run time (scripts/test.sh puts .tools/librdkafka
///   on LD_LIBRARY_PATH).
public final class Tansu: Sendable {
    public enum Storage: Sendable {
        case memory
        /// An S3 server such as ``S3Server``: durable across broker restarts.
        case s3(endpoint: String, bucket: String)
    }

    /// What clients must get through: TLS in front, client certificates, SASL.
    public struct Security: Sendable {
        /// Clients connect through TLS with the test CA's server certificate
        /// (``TestCertificates/shared``).
        public var tls = false
        /// The TLS front also asks for a client certificate signed by the test CA (mTLS); see
        /// ``clientCertificate``.
        public var clientCertificates = false
        /// Clients must log in with SASL/SCRAM (SCRAM-SHA-256 or SCRAM-SHA-512) as `scramUser`
        /// with `scramPassword`: ``KafkaSCRAMFront`` sits in front of tansu, which runs without
        /// `--authentication` (tansu 0.6.0's own SCRAM refuses every login, "unknown-user":
        /// docs/testing.md).
        public var authentication = false
        /// The one user the SCRAM front knows, with `authentication`.
        public var scramUser = "pushbridge"
        public var scramPassword = "secret"

        public init(tls: Bool = false, clientCertificates: Bool = false, authentication: Bool = false) {
            self.tls = tls
            self.clientCertificates = clientCertificates
            self.authentication = authentication
        }
    }

    /// Where clients connect: the outermost front when there is one.
    public let bootstrapServers: String
    /// A client certificate and key the TLS front trusts (with ``Security/clientCertificates``).
    public let clientCertificate: (certificate: String, key: String)?
    /// tansu's own port (plaintext).
    private let port: Int
    /// The port tansu advertises in its metadata: the outermost front's, or its own.
    private let advertisedPort: Int
    private let storage: Storage
    private let security: Security
    /// Stopped before tansu's process (``deinit``).
    private let scramFront: KafkaSCRAMFront?
    private let tlsFront: KafkaTLSFront?
    private let directory: URL
    private let process: Mutex<ChildProcess?>

    /// Starts a broker off the cooperative pool (``offPool(_:)``).
    public static func start(storage: Storage = .memory, security: Security = Security()) async throws -> Tansu {
        try await offPool { try Tansu(storage: storage, security: security) }
    }

    /// Starts a broker on a free port. Should the port be taken after all before tansu binds it
    /// (tansu exits with "Address in use"), starts it on another one.
    public init(storage: Storage = .memory, security: Security = Security()) throws {
        self.storage = storage
        self.security = security
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-tansu-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // tansu advertises the outermost front's port, so clients that follow its metadata stay
        // behind TLS and SASL.
        let frontPort = try security.tls || security.authentication ? FreePort.next() : nil
        let (port, child) = try FreePort.startServer { [directory] port in
            (port, try Self.launch(port: port, advertisedPort: frontPort ?? port, storage: storage, directory: directory))
        }
        process = Mutex(child)
        self.port = port
        advertisedPort = frontPort ?? port
        bootstrapServers = "127.0.0.1:\(advertisedPort)"
        // From the inside out: the SCRAM front (on the outermost port without TLS), then TLS.
        var target = "127.0.0.1:\(port)"
        if security.authentication, let frontPort {
            let start = { [directory] (scramPort: Int) in
                try KafkaSCRAMFront(
                    port: scramPort, upstream: "127.0.0.1:\(port)", users: [security.scramUser: security.scramPassword], directory: directory)
            }
            let scram = try security.tls ? FreePort.startServer(start) : start(frontPort)
            target = "127.0.0.1:\(scram.port)"
            scramFront = scram
        } else {
            scramFront = nil
        }
        if security.tls, let frontPort {
            let certificates = try TestCertificates.shared
            clientCertificate = try security.clientCertificates ? certificates.clientCertificate(in: directory) : nil
            tlsFront = try KafkaTLSFront(
                port: frontPort, target: target, certificates: certificates, clientCA: security.clientCertificates ? certificates.caFile : nil)
        } else {
            (clientCertificate, tlsFront) = (nil, nil)
        }
    }

    /// The SCRAM front's log, with ``Security/authentication``: one line per login or refusal.
    public var scramLog: String { scramFront?.log ?? "" }

    /// The librdkafka properties that get a client through ``Security``: `security.protocol`, the
    /// CA to trust, the client certificate; with ``Security/authentication`` SCRAM-SHA-512 and the
    /// user the SCRAM front knows.
    public var clientProperties: [String: String] {
        get throws {
            var p: [String: String] = [:]
            switch (security.tls, security.authentication) {
            case (true, true): p["security.protocol"] = "SASL_SSL"
            case (true, false): p["security.protocol"] = "SSL"
            case (false, true): p["security.protocol"] = "SASL_PLAINTEXT"
            case (false, false): return [:]
            }
            if security.authentication {
                p["sasl.mechanisms"] = "SCRAM-SHA-512"
                p["sasl.username"] = security.scramUser
                p["sasl.password"] = security.scramPassword
            }
            if security.tls { p["ssl.ca.location"] = try TestCertificates.shared.caFile }
            if let clientCertificate {
                p["ssl.certificate.location"] = clientCertificate.certificate
                p["ssl.key.location"] = clientCertificate.key
            }
            return p
        }
    }

    deinit {
        // From the outside in: clients still connected see the broker go, not a front that
        // cannot reach it any more.
        tlsFront?.stop()
        scramFront?.stop()
        process.withLock { $0?.terminate() }
        try? FileManager.default.removeItem(at: directory)
    }

    /// Starts tansu on 127.0.0.1:`port`, advertising `advertisedPort`, its log in `directory`,
    /// and waits until it listens.
    private static func launch(port: Int, advertisedPort: Int, storage: Storage, directory: URL) throws -> ChildProcess {
        let url = "tcp://127.0.0.1:\(port)"
        var environment = ["RUST_LOG": "warn"]
        let engine: String
        switch storage {
        case .memory:
            engine = "memory://tansu/"
        case .s3(let endpoint, let bucket):
            engine = "s3://\(bucket)/"
            environment["AWS_ENDPOINT"] = endpoint
            environment["AWS_ALLOW_HTTP"] = "true"
            environment["AWS_ACCESS_KEY_ID"] = "test"
            environment["AWS_SECRET_ACCESS_KEY"] = "test"
            environment["AWS_DEFAULT_REGION"] = "us-east-1"
        }
        let child = try ChildProcess(
            executable: Repository.tool("bin/tansu"),
            arguments: [
                "broker", "--listener-url", url, "--advertised-listener-url", "tcp://127.0.0.1:\(advertisedPort)", "--storage-engine", engine,
            ],
            logFile: directory.appendingPathComponent("tansu-\(port).log").path,
            environment: environment
        )
        try child.waitUntilListening(port: port, timeout: .seconds(20))
        return child
    }

    /// Stops the broker (`kill -9` when `hard`, else SIGTERM), waits `downtime`, and starts it
    /// again on the same port with the same storage.
    public func restart(hard: Bool = true, downtime: Duration = .zero) async throws {
        let old = process.withLock { p -> ChildProcess? in
            defer { p = nil }
            return p
        }
        if let old {
            if hard, let program = old.programPID { kill(program, SIGKILL) }
            try await offPool { old.terminate() }
        }
        try await Task.sleep(for: downtime)
        let child = try await offPool { [port, advertisedPort, storage, directory] in
            try Self.launch(port: port, advertisedPort: advertisedPort, storage: storage, directory: directory)
        }
        process.withLock { $0 = child }
    }

    /// ``createTopic(_:partitions:)`` off the cooperative pool (``offPool(_:)``).
    public func createTopic(_ name: String, partitions: Int32) async throws {
        try await offPool { try self.createTopic(name, partitions: partitions) }
    }

    /// Creates a topic with tansu's CLI (CreateTopics), on tansu's own port (behind the fronts:
    /// the CLI speaks neither TLS nor SASL).
    public func createTopic(_ name: String, partitions: Int32) throws {
        let p = try ChildProcess(
            executable: Repository.tool("bin/tansu"),
            arguments: ["topic", "create", "--broker", "tcp://127.0.0.1:\(port)", "--partitions", String(partitions), name],
            logFile: "/dev/null"
        )
        let status = p.wait(timeout: .seconds(30))
        guard status == 0 else { throw TestSupportError("tansu topic create \(name) exited \(status.map(String.init) ?? "late")") }
    }
}
