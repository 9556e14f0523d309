import Crypto
import ExtrasBase64
import Foundation
import JSON
import _CryptoExtras

/// The signed JWT a service account exchanges for an OAuth2 access token (RFC 7523):
/// header `{"alg":"RS256","typ":"JWT"}`, claims `iss`, `scope`, `aud` (= token URI), `iat`, `exp`.
public enum ServiceAccountJWT {
    /// The scope FCM HTTP v1 needs.
    public static let messagingScope = "https://www.googleapis.com/auth/firebase.messaging"

    /// Signs a JWT with RS256 (RSASSA-PKCS1-v1_5 with SHA-256).
    /// - Parameter lifetime: at most one hour, as Google requires.
    /// - Throws: ``FCMConfigurationError`` if the private key cannot be used (its text is never included).
    public static func make(
        for account: ServiceAccount, now: Date = Date(), lifetime: Duration = .seconds(3600),
        scope: String = messagingScope
    ) throws(FCMConfigurationError) -> String {
        let key: _RSA.Signing.PrivateKey
        do {
            key = try _RSA.Signing.PrivateKey(pemRepresentation: account.privateKeyPEM)
        } catch {
            throw FCMConfigurationError("the service account's private_key is not a usable RSA key (\(type(of: error)))")
        }
        let iat = Int(now.timeIntervalSince1970)
        let seconds = min(Int(lifetime.components.seconds), 3600)
        var header = #"{"alg":"RS256","typ":"JWT""#
        if let kid = account.privateKeyID { header += #","kid":"# + JSONWriter.quoted(kid) }
        header += "}"
        // By hand, in the order Google's documentation gives (JSONWriter sorts members by key).
        let claims =
            #"{"iss":\#(JSONWriter.quoted(account.clientEmail)),"scope":\#(JSONWriter.quoted(scope)),"#
            + #""aud":\#(JSONWriter.quoted(account.tokenURI)),"iat":\#(iat),"exp":\#(iat + seconds)}"#
        let signingInput = base64URL(Array(header.utf8)) + "." + base64URL(Array(claims.utf8))
        let signature: _RSA.Signing.RSASignature
        do {
            signature = try key.signature(for: SHA256.hash(data: Array(signingInput.utf8)), padding: .insecurePKCS1v1_5)
        } catch {
            throw FCMConfigurationError("signing the JWT failed (\(type(of: error)))")
        }
        return signingInput + "." + base64URL(Array(signature.rawRepresentation))
    }

    /// base64url without padding (RFC 7515 §2).
    static func base64URL(_ bytes: [UInt8]) -> String {
        Base64.encodeToString(bytes: bytes, options: [.base64UrlAlphabet, .omitPaddingCharacter])
    }
}
