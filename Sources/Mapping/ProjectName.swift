/// The names of the config's `fcm.projects`, which mappings use (`project:`, a `user` target's
/// `app`) and registry devices name: the one rule both the mapping loader and the config loader
/// check.
public enum ProjectName {
    /// 1–100 of letters, digits, `-`, `_`, `.`.
    public static func isValid(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 100
            && name.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || "-_.".utf8.contains($0) }
    }
}
