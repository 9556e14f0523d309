/// Device identifiers (registration tokens and Firebase Installation IDs) are personal data:
/// logs show only their last 6 characters.
public enum Redaction {
    /// `…` + the last 6 characters; fully masked when 6 or fewer.
    public static func token(_ token: String) -> String {
        token.count <= 6 ? "…" : "…" + token.suffix(6)
    }

    /// Metadata keys whose values are device identifiers: `token`, `*_token`, `*Token`, `fid`,
    /// `*_fid`, `*Fid`.
    static func isTokenKey(_ key: String) -> Bool {
        key == "token" || key.hasSuffix("_token") || key.hasSuffix("Token") || key == "fid" || key.hasSuffix("_fid") || key.hasSuffix("Fid")
    }
}
