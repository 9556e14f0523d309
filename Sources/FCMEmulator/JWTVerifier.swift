import Crypto
import ExtrasBase64
import Foundation
import JSON
import _CryptoExtras

/// Checks a service account's JWT bearer assertion as Google's token endpoint does: an RS256
/// signature by a known account's key, the FCM scope, `aud` = the token URI, and a live `exp`
/// at most an hour after `iat`.
struct JWTVerifier: Sendable {
    /// client_email → its public key.
    let keys: [String: _RSA.Signing.PublicKey]
    /// The `aud` values accepted (the emulator's token URIs).
    let audiences: Set<String>
    static let scope = "https://www.googleapis.com/auth/firebase.messaging"

    /// The account that signed it, or why it is refused (OAuth2's `error_description`).
    func verify(_ jwt: String, now: Date = Date()) -> Result<String, EmulatorError> {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Self.base64URL(parts[0]), let claimBytes = Self.base64URL(parts[1]),
            let signature = Self.base64URL(parts[2]),
            let header = try? JSONParser.parse(headerBytes), let claims = try? JSONParser.parse(claimBytes)
        else { return .failure(EmulatorError("Invalid JWT: not three base64url JSON parts")) }
        guard header["alg"] == .string("RS256") else { return .failure(EmulatorError("Invalid JWT: alg must be RS256")) }
        guard case .string(let issuer)? = claims["iss"], let key = keys[issuer] else {
            return .failure(EmulatorError("Invalid JWT: unknown issuer (iss)"))
        }
        let signingInput = Array("\(parts[0]).\(parts[1])".utf8)
        guard
            key.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: signature), for: SHA256.hash(data: signingInput), padding: .insecurePKCS1v1_5)
        else {
            return .failure(EmulatorError("Invalid JWT Signature."))
        }
        guard case .string(let scope)? = claims["scope"], scope.split(separator: " ").contains(Substring(Self.scope)) else {
            return .failure(EmulatorError("Invalid JWT: scope must include \(Self.scope)"))
        }
        guard case .string(let aud)? = claims["aud"], audiences.contains(aud) else {
            return .failure(EmulatorError("Invalid JWT: aud must be the token URI (\(audiences.sorted().joined(separator: " or ")))"))
        }
        guard case .int(let iat)? = claims["iat"], case .int(let exp)? = claims["exp"] else {
            return .failure(EmulatorError("Invalid JWT: iat and exp are required integers"))
        }
        let t = Int64(now.timeIntervalSince1970)
        guard exp > t else {
            return .failure(
                EmulatorError("Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. The JWT has expired (exp)"))
        }
        guard exp - iat <= 3600, iat <= t + 300 else {
            return .failure(
                EmulatorError(
                    "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values"))
        }
        return .success(issuer)
    }

    /// A JWT part's bytes: base64url, padded or not (the standard alphabet's `+` and `/` pass too).
    static func base64URL(_ text: Substring) -> [UInt8]? {
        let standard = text.utf8.map { $0 == UInt8(ascii: "-") ? UInt8(ascii: "+") : $0 == UInt8(ascii: "_") ? UInt8(ascii: "/") : $0 }
        return try? Base64.decode(bytes: standard, options: .omitPaddingCharacter)
    }
}
