#if DEBUG
    /// A virtual wall clock for tests, anchored to the real one (issue 56 design §7.1):
    /// `virtual = V0 + rate × (realNow − R0) + skew`. The real anchor `R0` makes several worker
    /// processes agree on "now"; `rate` lets a night pass in a minute; `skew` plays a worker
    /// whose clock is wrong. Compiled only in debug builds: a release `pushbridge` has no way
    /// to run on it (the worker refuses `PUSHBRIDGE_TEST_CLOCK`, docs/testing.md).
    public struct TestClock: WallClock, Equatable {
        /// Virtual milliseconds since the epoch at ``realAnchor``.
        public let virtualStart: Int64
        /// Real milliseconds since the epoch the virtual start is pinned to.
        public let realAnchor: Int64
        /// Virtual milliseconds per real millisecond (> 0).
        public let rate: Double
        /// Added to every reading (a worker with a wrong clock).
        public let skewMilliseconds: Int64
        let real: @Sendable () -> Int64

        public init(
            virtualStart: Int64, realAnchor: Int64, rate: Double = 1, skewMilliseconds: Int64 = 0,
            real: @escaping @Sendable () -> Int64 = { RFC3339.nowMilliseconds() }
        ) {
            self.virtualStart = virtualStart
            self.realAnchor = realAnchor
            self.rate = rate
            self.skewMilliseconds = skewMilliseconds
            self.real = real
        }

        public func nowMilliseconds() -> Int64 { virtual(atReal: real()) }

        /// The virtual difference at this clock's rate, rounded up to a real millisecond.
        public func realDuration(untilMilliseconds target: Int64) -> Duration {
            let virtual = max(0, target - nowMilliseconds())
            return .milliseconds(Int64((Double(virtual) / rate).rounded(.up)))
        }

        /// The virtual instant at a real one.
        public func virtual(atReal realMilliseconds: Int64) -> Int64 {
            virtualStart + Int64((Double(realMilliseconds - realAnchor) * rate).rounded(.down)) + skewMilliseconds
        }

        /// `virtual=2027-03-27T21:00:00Z,real=1795000000000,rate=600,skew_ms=0`: `virtual` an
        /// RFC 3339 instant (or milliseconds), `real` milliseconds since the epoch (default:
        /// now, when this is parsed), `rate` > 0 (default 1), `skew_ms` (default 0). Throws a
        /// message naming what is wrong.
        public init(parsing spec: String, realNow: Int64 = RFC3339.nowMilliseconds()) throws(TestClockError) {
            var virtual: Int64?
            var real = realNow
            var rate = 1.0
            var skew: Int64 = 0
            var seen: Set<Substring> = []
            for part in spec.split(separator: ",", omittingEmptySubsequences: false) {
                let pair = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard pair.count == 2, !pair[1].isEmpty else { throw TestClockError("\"\(part)\" is not name=value") }
                let (name, value) = (pair[0].trimmingSpaces, String(pair[1].trimmingSpaces))
                guard seen.insert(name).inserted else { throw TestClockError("\(name) is given twice") }
                switch name {
                case "virtual":
                    guard let ms = Int64(value) ?? RFC3339.parseMilliseconds(value) else {
                        throw TestClockError("virtual must be an RFC 3339 instant or epoch milliseconds, got \"\(value)\"")
                    }
                    virtual = ms
                case "real":
                    guard let ms = Int64(value) else { throw TestClockError("real must be epoch milliseconds, got \"\(value)\"") }
                    real = ms
                case "rate":
                    guard let r = Double(value), r.isFinite, r > 0 else { throw TestClockError("rate must be a number > 0, got \"\(value)\"") }
                    rate = r
                case "skew_ms":
                    guard let s = Int64(value) else { throw TestClockError("skew_ms must be whole milliseconds, got \"\(value)\"") }
                    skew = s
                default:
                    throw TestClockError("unknown member \"\(name)\" (virtual, real, rate, skew_ms)")
                }
            }
            guard let virtual else { throw TestClockError("virtual is required") }
            self.init(virtualStart: virtual, realAnchor: real, rate: rate, skewMilliseconds: skew)
        }

        public static func == (a: TestClock, b: TestClock) -> Bool {
            (a.virtualStart, a.realAnchor, a.rate, a.skewMilliseconds) == (b.virtualStart, b.realAnchor, b.rate, b.skewMilliseconds)
        }
    }

    /// Why a `PUSHBRIDGE_TEST_CLOCK` value is refused.
    public struct TestClockError: Error, Equatable, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    extension Substring {
        fileprivate var trimmingSpaces: Substring {
            var s = self
            while s.first == " " { s.removeFirst() }
            while s.last == " " { s.removeLast() }
            return s
        }
    }
#endif
