import FCM
import Foundation
import TestSupport
import Testing

@Suite("Service account and RS256 JWT")
struct ServiceAccountJWTTests {
    static func base64URLDecode(_ s: Substring) -> Data {
        var t = s.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while t.count % 4 != 0 { t += "=" }
        return Data(base64Encoded: t)!
    }

    @Test("the JWT has Google's header and claims, and openssl verifies its RS256 signature")
    func opensslVerifies() async throws {
        let folder = try TemporaryFolder()
        let dir = folder.url
        defer { withExtendedLifetime(folder) {} }
        let (pem, pub) = try await offPool { try TestKeys.rsaKey(in: dir) }
        let account = ServiceAccount(
            projectID: "demo-project", clientEmail: "pushbridge@demo-project.iam.gserviceaccount.com",
            privateKeyPEM: pem, privateKeyID: "k1", tokenURI: "https://127.0.0.1:8443/token")
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let jwt = try ServiceAccountJWT.make(for: account, now: now)

        let parts = jwt.split(separator: ".")
        #expect(parts.count == 3)
        let header = try JSONSerialization.jsonObject(with: Self.base64URLDecode(parts[0])) as! [String: Any]
        #expect(header["alg"] as? String == "RS256" && header["typ"] as? String == "JWT" && header["kid"] as? String == "k1")
        let claims = try JSONSerialization.jsonObject(with: Self.base64URLDecode(parts[1])) as! [String: Any]
        #expect(claims["iss"] as? String == account.clientEmail)
        #expect(claims["scope"] as? String == "https://www.googleapis.com/auth/firebase.messaging")
        #expect(claims["aud"] as? String == "https://127.0.0.1:8443/token")
        #expect(claims["iat"] as? Int == 1_800_000_000)
        #expect(claims["exp"] as? Int == 1_800_003_600)

        let input = dir.appendingPathComponent("input")
        let sig = dir.appendingPathComponent("sig")
        try Data((parts[0] + "." + parts[1]).utf8).write(to: input)
        try Self.base64URLDecode(parts[2]).write(to: sig)
        let verify = try await ChildProcess.run("/usr/bin/openssl", ["dgst", "-sha256", "-verify", pub, "-signature", sig.path, input.path])
        #expect(verify.status == 0 && verify.output.contains("Verified OK"), "\(verify.output)")

        // A tampered claim no longer verifies.
        try Data((parts[0] + "." + parts[1] + "x").utf8).write(to: input)
        let bad = try await ChildProcess.run("/usr/bin/openssl", ["dgst", "-sha256", "-verify", pub, "-signature", sig.path, input.path])
        #expect(bad.status != 0)
    }

    @Test("header and claims are exactly these bytes, strings escaped by the JSON writer, in base64url without padding")
    func exactBytes() async throws {
        let folder = try TemporaryFolder()
        let dir = folder.url
        defer { withExtendedLifetime(folder) {} }
        let (pem, _) = try await offPool { try TestKeys.rsaKey(in: dir) }
        let account = ServiceAccount(
            projectID: "p", clientEmail: #"a"b\c@p.iam.gserviceaccount.com"# + "\t", privateKeyPEM: pem, privateKeyID: "k\u{01}é",
            tokenURI: "https://127.0.0.1:8443/token")
        let jwt = try ServiceAccountJWT.make(for: account, now: Date(timeIntervalSince1970: 1_800_000_000), lifetime: .seconds(600))
        let parts = jwt.split(separator: ".")
        try #require(parts.count == 3)
        #expect(String(decoding: Self.base64URLDecode(parts[0]), as: UTF8.self) == #"{"alg":"RS256","typ":"JWT","kid":"k\u0001é"}"#)
        #expect(
            String(decoding: Self.base64URLDecode(parts[1]), as: UTF8.self)
                == #"{"iss":"a\"b\\c@p.iam.gserviceaccount.com\t","scope":"https://www.googleapis.com/auth/firebase.messaging","#
                + #""aud":"https://127.0.0.1:8443/token","iat":1800000000,"exp":1800000600}"#)
        for part in parts {
            #expect(part.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }, "base64url, unpadded: \(part)")
        }
    }

    @Test("a key file is parsed; missing fields are named; the key never shows in descriptions")
    func parsing() throws {
        let json =
            #"{"type":"service_account","project_id":"p1","private_key_id":"abc","private_key":"-----BEGIN PRIVATE KEY-----\nSECRET\n-----END PRIVATE KEY-----\n","client_email":"a@p1.iam.gserviceaccount.com","token_uri":"https://localhost:9/token"}"#
        let account = try ServiceAccount(json: Data(json.utf8))
        #expect(account.projectID == "p1" && account.tokenURI == "https://localhost:9/token")
        #expect(!account.description.contains("SECRET"))
        #expect(!"\(account)".contains("SECRET"))

        #expect {
            _ = try ServiceAccount(json: Data(#"{"project_id":"p1","private_key":"x"}"#.utf8), source: "key.json")
        } throws: { ($0 as? FCMConfigurationError)?.description == #"key.json: missing "client_email""# }

        let bad = ServiceAccount(projectID: "p", clientEmail: "e", privateKeyPEM: "-----BEGIN PRIVATE KEY-----\nSECRET\n-----END PRIVATE KEY-----")
        #expect {
            _ = try ServiceAccountJWT.make(for: bad)
        } throws: { !String(describing: $0).contains("SECRET") }
    }

    @Test("GOOGLE_APPLICATION_CREDENTIALS is honoured when no path is given")
    func environment() throws {
        let folder = try TemporaryFolder()
        let dir = folder.url
        defer { withExtendedLifetime(folder) {} }
        let file = dir.appendingPathComponent("sa.json")
        try Data(#"{"project_id":"from-env","private_key":"k","client_email":"e@x"}"#.utf8).write(to: file)
        let account = try ServiceAccount.load(path: nil, environment: ["GOOGLE_APPLICATION_CREDENTIALS": file.path])
        #expect(account.projectID == "from-env")
        #expect(throws: FCMConfigurationError.self) { try ServiceAccount.load(path: nil, environment: [:]) }
    }
}
