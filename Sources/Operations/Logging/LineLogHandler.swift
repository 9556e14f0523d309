import Dates
import Foundation
import JSON
import Logging

/// Where log lines go: standard error, or a test's collector.
public typealias LogSink = @Sendable (String) -> Void

/// Writes each entry as one line in ``LogFormat``, tokens redacted:
/// - `.json`: `ts` (RFC 3339 UTC, ms), `level`, `label`, `msg`, then the metadata as keys, e.g.
///   `{"ts":"2026-11-22T10:00:00.123Z","level":"warning","label":"pushbridge","msg":"dead-lettered","reason_code":"invalid_json"}`;
/// - `.text`: `2026-11-22T10:00:00.123Z warning pushbridge: dead-lettered reason_code=invalid_json`.
public struct LineLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    let label: String
    let format: LogFormat
    let sink: LogSink

    public init(label: String, format: LogFormat, sink: @escaping LogSink = LogSinks.standardError) {
        self.label = label
        self.format = format
        self.sink = sink
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }.sorted { $0.key < $1.key }
        switch format {
        case .json:
            var members: [(key: String, value: JSONValue)] = [
                ("ts", .string(LogTime.now())), ("level", .string(event.level.rawValue)),
                ("label", .string(label)), ("msg", .string(event.message.description)),
            ]
            for (key, value) in merged where !["ts", "level", "label", "msg"].contains(key) {
                members.append((key, LogValue.json(value, key: key)))
            }
            sink(String(decoding: JSONWriter.write(.object(members)), as: UTF8.self))
        case .text:
            var line = "\(LogTime.now()) \(event.level) \(label): \(event.message)"
            for (key, value) in merged { line += " \(key)=\(LogValue.text(value, key: key))" }
            sink(line)
        }
    }
}

public enum LogSinks {
    public static let standardError: LogSink = { line in
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}

enum LogValue {
    static func json(_ value: Logger.Metadata.Value, key: String) -> JSONValue {
        switch value {
        case .string(let s): .string(Redaction.isTokenKey(key) ? Redaction.token(s) : s)
        case .stringConvertible(let c): .string(Redaction.isTokenKey(key) ? Redaction.token(c.description) : c.description)
        case .array(let a): .array(a.map { json($0, key: key) })
        case .dictionary(let d): .object(d.sorted { $0.key < $1.key }.map { ($0.key, json($0.value, key: $0.key)) })
        }
    }

    static func text(_ value: Logger.Metadata.Value, key: String) -> String {
        switch value {
        case .string(let s): Redaction.isTokenKey(key) ? Redaction.token(s) : s
        case .stringConvertible(let c): Redaction.isTokenKey(key) ? Redaction.token(c.description) : c.description
        case .array(let a): "[" + a.map { text($0, key: key) }.joined(separator: ",") + "]"
        case .dictionary(let d): "{" + d.sorted { $0.key < $1.key }.map { "\($0.key)=\(text($0.value, key: $0.key))" }.joined(separator: ",") + "}"
        }
    }
}

enum LogTime {
    static func now() -> String {
        let ms = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
        return RFC3339.format(milliseconds: ms)
    }
}
