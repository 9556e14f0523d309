import Dates

/// The wall clock a worker runs on: the system's, or in a debug build, the virtual clock
/// `PUSHBRIDGE_TEST_CLOCK` describes (``TestClock``; docs/testing.md) when every broker is on
/// loopback. A release build refuses to start with the variable set, so a production worker can
/// never judge `max_age` or quiet hours by a test's clock.
public enum WorkerClock {
    public static let variable = "PUSHBRIDGE_TEST_CLOCK"

    /// Why the worker does not start.
    public struct Refusal: Error, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// The clock from `environment`: ``SystemWallClock`` without the variable.
    ///
    /// - Throws: ``Refusal`` in a release build with the variable set; in a debug build when a
    ///   broker is not loopback or the value does not parse.
    public static func choose(environment: [String: String], brokers: [String]) throws(Refusal) -> any WallClock {
        guard let spec = environment[variable] else { return SystemWallClock() }
        #if DEBUG
            if let remote = brokers.first(where: { !isLoopback(broker: $0) }) {
                throw Refusal(description: "\(variable) is for tests: honoured only when every kafka.brokers entry is loopback, and \(remote) is not")
            }
            do {
                return try TestClock(parsing: spec)
            } catch {
                throw Refusal(description: "\(variable)=\(spec): \(error)")
            }
        #else
            _ = spec
            throw Refusal(description: "\(variable) is for tests: a release build does not run on a test clock; unset it")
        #endif
    }

    /// `127.0.0.1:9092`, `localhost:9092`, `[::1]:9092` (a `SCHEME://` prefix allowed); names are
    /// not resolved.
    public static func isLoopback(broker: String) -> Bool {
        var rest = Substring(broker)
        if let scheme = rest.range(of: "://") { rest = rest[scheme.upperBound...] }
        let host: Substring
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return false }
            host = rest[rest.index(after: rest.startIndex)..<close]
        } else if rest.filter({ $0 == ":" }).count == 1, let colon = rest.firstIndex(of: ":") {
            host = rest[..<colon]
        } else {
            host = rest
        }
        if host.lowercased() == "localhost" || host == "::1" { return true }
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }
}
