import Foundation
import HTTP2
import JSON

/// Exchanges a service account's signed JWT for an OAuth2 access token at its `token_uri`
/// (RFC 7523 `jwt-bearer` grant).
enum TokenExchange {
    static let grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"

    /// - Throws: ``FCMError``: `.retryable` if the endpoint could not answer (transport, 5xx),
    ///   `.configuration` if it refused the account (4xx), with its `error_description`.
    static func fetch(_ account: ServiceAccount, http: HTTP2Client, now: Date = Date()) async throws(FCMError) -> AccessToken {
        let jwt: String
        do {
            jwt = try ServiceAccountJWT.make(for: account, now: now)
        } catch {
            throw FCMError(code: .tokenExchange, kind: .configuration, httpStatus: nil, message: error.description)
        }
        let body = "grant_type=\(formEncoded(grantType))&assertion=\(formEncoded(jwt))"
        let request = HTTPRequest(
            method: "POST", url: account.tokenURI,
            headers: ["content-type": "application/x-www-form-urlencoded", "accept": "application/json"],
            body: Array(body.utf8))
        let started = ContinuousClock.now
        let response: HTTPResponse
        do {
            response = try await http.send(request)
        } catch {
            var failure = FCMError(transport: error)
            failure.message = "token endpoint \(account.tokenURI): \(failure.message)"
            throw failure
        }
        let json = try? JSONParser.parse(response.body)
        guard response.status == 200 else {
            // OAuth2 errors: {"error": "invalid_grant", "error_description": "..."}
            let reason = [json?["error"], json?["error_description"]].compactMap { v -> String? in
                if case .string(let s)? = v { s } else { nil }
            }.joined(separator: ": ")
            throw FCMError(
                code: .tokenExchange, kind: response.status >= 500 ? .retryable : .configuration, httpStatus: response.status,
                message: "token endpoint \(account.tokenURI) refused the service account \(account.clientEmail): "
                    + (reason.isEmpty ? String(decoding: response.body.prefix(200), as: UTF8.self) : reason))
        }
        guard case .string(let token)? = json?["access_token"], !token.isEmpty else {
            throw FCMError(code: .tokenExchange, kind: .retryable, httpStatus: 200, message: "token endpoint answered without an access_token")
        }
        var lifetime: Int64 = 3600
        if case .int(let seconds)? = json?["expires_in"] { lifetime = seconds }
        return AccessToken(value: token, expiresAt: started + .seconds(lifetime))
    }

    /// `application/x-www-form-urlencoded`: everything but unreserved characters percent-encoded.
    static func formEncoded(_ s: String) -> String {
        var out = ""
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(b))
            default:
                out += "%" + String(b, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
