import Foundation
import Synchronization

/// Named IANA zones read from the OS tz database: `$TZDIR` if set, else /usr/share/zoneinfo
/// (Debian's and Ubuntu's `tzdata` package), each file parsed once and cached.
///
/// Not Foundation's `TimeZone`: FoundationEssentials resolves named zones only through ICU
/// (FoundationInternationalization), whose tz copy is the toolchain's, not the OS's; here a
/// lookup is a dictionary hit and a binary search (docs/architecture.md, "Time zones").
public final class TimeZoneDatabase: Sendable {
    public let directory: String
    private let cache = Mutex(Cache())

    private struct Cache {
        var zones: [String: ZoneRules] = [:]
        var unknown: Set<String> = []
    }

    /// At most this many names that resolved to nothing are remembered (then forgotten all at
    /// once): a stream of made-up names costs one failed read each, not unbounded memory.
    static let unknownLimit = 4096

    /// - Parameter directory: nil: `$TZDIR` if set and not empty, else /usr/share/zoneinfo.
    public init(directory: String? = nil) {
        if let directory {
            self.directory = directory
        } else if let env = ProcessInfo.processInfo.environment["TZDIR"], !env.isEmpty {
            self.directory = env
        } else {
            self.directory = "/usr/share/zoneinfo"
        }
    }

    public static let shared = TimeZoneDatabase()

    private static let builtIn = ["UTC": ZoneRules.utc, "Etc/UTC": ZoneRules(name: "Etc/UTC", fixedOffsetSeconds: 0)]

    /// The zone of an IANA name (`Europe/Berlin`, `Etc/GMT-3`); nil when the name is not
    /// well-formed (``isWellFormed(_:)``), there is no such file, or it is not valid TZif.
    /// `UTC` and `Etc/UTC` are built in: they resolve without the directory.
    public func zone(named name: String) -> ZoneRules? {
        if let zone = Self.builtIn[name] { return zone }
        guard Self.isWellFormed(name) else { return nil }
        let cached: ZoneRules?? = cache.withLock { cache in
            if let zone = cache.zones[name] { return .some(zone) }
            return cache.unknown.contains(name) ? .some(nil) : nil
        }
        if let cached { return cached }
        // Read outside the lock: two first lookups of one name may both read it, never block
        // other lookups behind a file read.
        let zone = read(name)
        cache.withLock { cache in
            if let zone {
                cache.zones[name] = zone
            } else {
                if cache.unknown.count >= Self.unknownLimit { cache.unknown.removeAll() }
                cache.unknown.insert(name)
            }
        }
        return zone
    }

    private func read(_ name: String) -> ZoneRules? {
        let url = URL(fileURLWithPath: directory).appendingPathComponent(name)
        guard let data = try? Data(contentsOf: url), data.count <= 1 << 20 else { return nil }
        return try? ZoneRules(name: name, tzif: [UInt8](data))
    }

    /// A zone name as the tz database spells them: at most 64 characters of `A-Z a-z 0-9 _ + - /`,
    /// slash-separated components none of them empty (no leading or trailing `/`, no `//`).
    /// No `.` at all, so no `..` can leave the directory.
    public static func isWellFormed(_ name: String) -> Bool {
        let bytes = name.utf8
        guard !bytes.isEmpty, bytes.count <= 64 else { return false }
        var previous = UInt8(ascii: "/")
        for c in bytes {
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "_"), UInt8(ascii: "+"), UInt8(ascii: "-"):
                break
            case UInt8(ascii: "/"):
                guard previous != UInt8(ascii: "/") else { return false }
            default:
                return false
            }
            previous = c
        }
        return previous != UInt8(ascii: "/")
    }
}
