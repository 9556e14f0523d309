/// The commit-metadata encoding of offsets that are done beyond the committed watermark.
///
/// Format: `pb1:<base>:<ranges>` where `<base>` is the committed offset the map was written for
/// and `<ranges>` lists done offsets relative to it, as `a` or `a-b` joined by commas, e.g.
/// `pb1:1200:3-5,9` = offsets 1203, 1204, 1205 and 1209 are done. A map written for another base
/// (stale), in another format, or cut by a broker that drops metadata is ignored: the tracker
/// then falls back to the plain watermark, which can only cause re-sends, never losses.
public enum OffsetMap {
    /// Kafka's default `offset.metadata.max.bytes` is 4096.
    public static let defaultMaxBytes = 4000
    static let prefix = "pb1:"

    /// Encodes `done` (ascending, all > `base`); nil if empty or over `maxBytes`.
    public static func encode(done: [Int64], base: Int64, maxBytes: Int = defaultMaxBytes) -> String? {
        guard !done.isEmpty else { return nil }
        var parts: [String] = []
        var start = done[0]
        var end = done[0]
        func flush() {
            let a = start - base
            let b = end - base
            parts.append(a == b ? String(a) : "\(a)-\(b)")
        }
        for offset in done.dropFirst() {
            if offset == end + 1 {
                end = offset
            } else {
                flush()
                start = offset
                end = offset
            }
        }
        flush()
        let text = "\(prefix)\(base):" + parts.joined(separator: ",")
        return text.utf8.count <= maxBytes ? text : nil
    }

    /// Decodes a map written for exactly `base`; nil for anything else.
    public static func decode(_ metadata: String?, base: Int64) -> Set<Int64>? {
        guard let metadata, metadata.hasPrefix(prefix) else { return nil }
        let body = metadata.dropFirst(prefix.count)
        guard let colon = body.firstIndex(of: ":"), Int64(body[..<colon]) == base else { return nil }
        var result = Set<Int64>()
        for part in body[body.index(after: colon)...].split(separator: ",") {
            let bounds = part.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
            guard let a = Int64(bounds[0]), a > 0 else { return nil }
            let b = bounds.count == 2 ? Int64(bounds[1]) : a
            guard let b, b >= a, b - a < 1_000_000 else { return nil }
            for delta in a...b { result.insert(base + delta) }
        }
        return result
    }
}
