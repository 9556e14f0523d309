import Testing

@testable import FCM
@testable import FCMEmulator

/// The JWT's base64url: written by the service account's signer, read by the emulator's token
/// endpoint, both with swift-extras-base64.
@Suite("base64url: the JWT signer's and the emulator's")
struct Base64URLTests {
    @Test("RFC 4648's vectors, unpadded; the URL-safe alphabet's - and _ where standard base64 has + and /")
    func encode() {
        let vectors = ["": "", "f": "Zg", "fo": "Zm8", "foo": "Zm9v", "foob": "Zm9vYg", "fooba": "Zm9vYmE", "foobar": "Zm9vYmFy"]
        for (plain, encoded) in vectors { #expect(ServiceAccountJWT.base64URL(Array(plain.utf8)) == encoded, "\(plain)") }
        #expect(ServiceAccountJWT.base64URL([0xFB, 0xFF, 0xBF]) == "-_-_")
    }

    @Test("the emulator reads a part padded or not, in either alphabet, and refuses what is not base64 or padded past its last group")
    func decode() {
        #expect(JWTVerifier.base64URL("Zm9vYg") == Array("foob".utf8))
        #expect(JWTVerifier.base64URL("Zm9vYg==") == Array("foob".utf8))
        #expect(JWTVerifier.base64URL("Zm9vYg=") == Array("foob".utf8))
        #expect(JWTVerifier.base64URL("-_-_") == [0xFB, 0xFF, 0xBF])
        #expect(JWTVerifier.base64URL("+/+/") == [0xFB, 0xFF, 0xBF])
        #expect(JWTVerifier.base64URL("") == [])
        for broken: Substring in ["Z", "Zm9v*", "Zm9v Yg", "Zm9vé", "Zm9=Yg"] { #expect(JWTVerifier.base64URL(broken) == nil, "\(broken)") }
        // More `=` than the last group needs: Foundation's decoder took these, ExtrasBase64 does not.
        for padded: Substring in ["=", "Zm9v=", "Zm9v====", "Zm9vYmE=="] { #expect(JWTVerifier.base64URL(padded) == nil, "\(padded)") }
    }

    @Test("what the signer writes, the emulator reads back", arguments: 0..<40)
    func roundTrip(count: Int) {
        let bytes = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 251) }
        #expect(JWTVerifier.base64URL(Substring(ServiceAccountJWT.base64URL(bytes))) == bytes)
    }
}
