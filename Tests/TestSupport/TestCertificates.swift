import Foundation
import ProcessHarness

/// A CA and a server certificate for 127.0.0.1/localhost, made with the openssl CLI at test time.
public struct TestCertificates: Sendable {
    public let caFile: String
    public let certificateFile: String
    public let keyFile: String

    /// One set made per test process: servers that only need to be trusted share it (two RSA
    /// keys cost a few hundred milliseconds of CPU, per server otherwise). A test that needs a
    /// CA of its own calls ``generate(in:)``.
    public static var shared: TestCertificates {
        get throws { try sharedResult.get() }
    }

    private static let sharedResult = Result<TestCertificates, any Error> {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-ca-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return try generate(in: directory)
    }

    /// Copies the three files into `directory` (a server's configuration names them there).
    public func copy(to directory: URL) throws -> TestCertificates {
        let copies = try [caFile, certificateFile, keyFile].map { file in
            let target = directory.appendingPathComponent(URL(fileURLWithPath: file).lastPathComponent)
            try FileManager.default.copyItem(atPath: file, toPath: target.path)
            return target.path
        }
        return TestCertificates(caFile: copies[0], certificateFile: copies[1], keyFile: copies[2])
    }

    /// A client certificate (`client.crt`, `client.key`, CN `pushbridge`) signed by this CA, for
    /// TLS servers that ask clients for one (mTLS). Needs the CA's key beside its certificate
    /// (`ca.key`, as ``generate(in:)`` leaves it; a ``copy(to:)`` has none).
    public func clientCertificate(in directory: URL) throws -> (certificate: String, key: String) {
        let d = directory.path
        let caKey = URL(fileURLWithPath: caFile).deletingLastPathComponent().appendingPathComponent("ca.key").path
        let ext = directory.appendingPathComponent("client.ext")
        try "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=clientAuth\n".write(to: ext, atomically: true, encoding: .utf8)
        let steps: [[String]] = [
            ["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=pushbridge", "-keyout", "\(d)/client.key", "-out", "\(d)/client.csr"],
            [
                "x509", "-req", "-in", "\(d)/client.csr", "-CA", caFile, "-CAkey", caKey, "-CAcreateserial", "-days", "2",
                "-extfile", ext.path, "-out", "\(d)/client.crt",
            ],
        ]
        for args in steps {
            let result = try ChildProcess.run("/usr/bin/openssl", args)
            guard result.status == 0 else { throw TestSupportError("openssl \(args[0]) failed: \(result.output)") }
        }
        return ("\(d)/client.crt", "\(d)/client.key")
    }

    /// Writes `ca.crt`, `server.crt` and `server.key` into `directory`.
    public static func generate(in directory: URL) throws -> TestCertificates {
        let d = directory.path
        let ext = directory.appendingPathComponent("san.ext")
        try
            "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n"
            .write(to: ext, atomically: true, encoding: .utf8)
        let steps: [[String]] = [
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=pushbridge test CA",
                "-keyout", "\(d)/ca.key", "-out", "\(d)/ca.crt",
            ],
            ["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout", "\(d)/server.key", "-out", "\(d)/server.csr"],
            [
                "x509", "-req", "-in", "\(d)/server.csr", "-CA", "\(d)/ca.crt", "-CAkey", "\(d)/ca.key", "-CAcreateserial",
                "-days", "2", "-extfile", ext.path, "-out", "\(d)/server.crt",
            ],
        ]
        for args in steps {
            let result = try ChildProcess.run("/usr/bin/openssl", args)
            guard result.status == 0 else { throw TestSupportError("openssl \(args[0]) failed: \(result.output)") }
        }
        return TestCertificates(caFile: "\(d)/ca.crt", certificateFile: "\(d)/server.crt", keyFile: "\(d)/server.key")
    }
}
