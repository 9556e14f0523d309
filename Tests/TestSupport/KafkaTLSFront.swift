import Foundation
import ProcessHarness

/// TLS in front of a Kafka-protocol broker: nginx's stream module (Debian's
/// `libnginx-mod-stream`) on a given loopback port, ending TLS with the test CA's server
/// certificate and passing the bytes to the broker. tansu 0.6.0 cannot serve TLS itself (its
/// `--cert` and `--key` flags exclude each other; docs/testing.md), so ``Tansu`` puts this in
/// front when asked for TLS. With `clientCA`, clients must show a certificate that CA signed
/// (mTLS). Configuration: `Resources/nginx-kafka-tls.conf.template`. Stopped when released.
public final class KafkaTLSFront: Sendable {
    public let port: Int
    public let directory: URL
    private let process: ChildProcess

    /// Starts nginx on 127.0.0.1:`port` passing connections to `target` (`host:port`), and waits
    /// until it listens.
    public init(port: Int, target: String, certificates: TestCertificates, clientCA: String? = nil) throws {
        self.port = port
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-kafka-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        _ = try certificates.copy(to: directory)
        let clientAuth = clientCA.map { "        ssl_verify_client on;\n        ssl_client_certificate \($0);" } ?? ""
        let config = try String(contentsOfFile: Self.templatePath, encoding: .utf8)
            .replacingOccurrences(of: "{{DIR}}", with: directory.path)
            .replacingOccurrences(of: "{{PORT}}", with: String(port))
            .replacingOccurrences(of: "{{TARGET}}", with: target)
            .replacingOccurrences(of: "{{CLIENT_AUTH}}", with: clientAuth)
        let configFile = directory.appendingPathComponent("nginx.conf")
        try config.write(to: configFile, atomically: true, encoding: .utf8)
        process = try ChildProcess(
            executable: "/usr/sbin/nginx", arguments: ["-p", directory.path, "-c", configFile.path],
            logFile: directory.appendingPathComponent("stdout.log").path)
        try process.waitUntilListening(port: port, timeout: .seconds(20))
    }

    /// Stops nginx (idempotent): new connections are refused, open ones are cut.
    public func stop() {
        process.terminate()
    }

    deinit {
        process.terminate()
        try? FileManager.default.removeItem(at: directory)
    }

    static var templatePath: String { Repository.root + "/Tests/TestSupport/Resources/nginx-kafka-tls.conf.template" }
}
