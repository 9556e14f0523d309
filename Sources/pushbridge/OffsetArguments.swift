import ArgumentParser
import Foundation
import Operations
import Pipeline

/// Parsing of `--from-offset`/`--to-offset`/`--from-time`/… values, shared by `replay` and
/// `offsets reset`.
enum OffsetArguments {
    struct Invalid: Error, CustomStringConvertible {
        let description: String
    }

    /// `["1200"]` → the same offset everywhere; `["0:1200", "1:980"]` → an offset per partition.
    static func offsets(_ values: [String], flag: String) throws -> OffsetPosition {
        if values.count == 1, let o = Int64(values[0]) {
            guard o >= 0 else { throw Invalid(description: "\(flag) \(o): offsets are 0 or more") }
            return .offset(o)
        }
        var map: [Int32: Int64] = [:]
        for value in values {
            let parts = value.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, let p = Int32(parts[0]), let o = Int64(parts[1]), p >= 0, o >= 0 else {
                throw Invalid(description: "\(flag) \(value): expected OFFSET, or PARTITION:OFFSET (repeatable), e.g. \(flag) 0:1200 \(flag) 1:980")
            }
            guard map.updateValue(o, forKey: p) == nil else { throw Invalid(description: "\(flag): partition \(p) given twice") }
        }
        return .partitionOffsets(map)
    }

    /// RFC 3339, e.g. `2026-11-20T10:00:00Z`, `2026-11-20T11:00:00+01:00`, `…10:00:00.250Z`.
    static func time(_ value: String, flag: String) throws -> OffsetPosition {
        let plain = ISO8601DateFormatter()
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions.insert(.withFractionalSeconds)
        guard let date = plain.date(from: value) ?? fractional.date(from: value) else {
            throw Invalid(description: "\(flag) \(value): expected an RFC 3339 time with a zone, e.g. 2026-11-20T10:00:00Z")
        }
        return .time(milliseconds: Int64((date.timeIntervalSince1970 * 1000).rounded()))
    }

    /// Exactly one of the given starts; `names` lists the flags for the error message.
    static func exactlyOne(_ candidates: [OffsetPosition?], names: String) throws -> OffsetPosition {
        let given = candidates.compactMap { $0 }
        guard given.count == 1 else {
            throw Invalid(description: given.isEmpty ? "give one of \(names)" : "give only one of \(names)")
        }
        return given[0]
    }

    /// Loads the config or exits 2 with the error.
    static func loadConfig(_ path: String) throws -> PushbridgeConfig {
        do {
            return try PushbridgeConfig.load(file: path)
        } catch {
            FileHandle.standardError.write(Data("pushbridge: bad config\n\(error)\n".utf8))
            throw ExitCode(2)
        }
    }

    /// Prints `pushbridge: message` to standard error and exits 2 (bad input).
    static func usage(_ message: String) -> ExitCode {
        stderr("pushbridge: \(message)")
        return ExitCode(2)
    }
}
