import Foundation

/// RSA keys for service accounts, made by the openssl CLI at test time as Google ships them
/// (PKCS#8 PEM); a ``TemporaryFolder`` holds them.
public enum TestKeys {
    /// A fresh 2048-bit key in `dir`: its PEM text and the path of its public key.
    public static func rsaKey(in dir: URL) throws -> (privatePEM: String, publicKeyPath: String) {
        let key = dir.appendingPathComponent("key.pem").path
        let pub = dir.appendingPathComponent("pub.pem").path
        for args in [
            ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", key], ["pkey", "-in", key, "-pubout", "-out", pub],
        ] {
            let result = try ChildProcess.run("/usr/bin/openssl", args)
            guard result.status == 0 else { throw TestSupportError("openssl \(args[0]) failed: \(result.output)") }
        }
        return (try String(contentsOfFile: key, encoding: .utf8), pub)
    }
}
