/// Device tokens are personal data: logs show only their last 6 characters.
public enum Redaction {
    /// `…` + the last 6 characters; fully masked when 6 or fewer.
    public static func token(_ token: String) -> String {
        token.count <= 6 ? "…" : "…" + token.suffix(6)
    }

    /// Metadata keys whose values are tokens: `token`, `*_token`, `*Token`.
    static func isTokenKey(_ key: String) -> Bool {
        key == "token" || key.hasSuffix("_token") || key.hasSuffix("Token")
    }
}
