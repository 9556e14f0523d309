import Foundation

/// Where the tests find the repository's files and the tools scripts/setup.sh installed.
public enum Repository {
    /// `PUSHBRIDGE_ROOT`, else the checkout this file is in (Tests/TestSupport/ is two levels down).
    public static let root: String =
        ProcessInfo.processInfo.environment["PUSHBRIDGE_ROOT"]
        ?? URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    /// A path under `.tools/` (tansu, the librdkafka runtime); `PUSHBRIDGE_TOOLS` overrides it.
    public static func tool(_ relative: String) -> String {
        (ProcessInfo.processInfo.environment["PUSHBRIDGE_TOOLS"] ?? root + "/.tools") + "/" + relative
    }
}
