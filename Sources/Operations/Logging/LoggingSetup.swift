import Logging
import Synchronization

public enum LogFormat: String, Sendable, CaseIterable {
    /// One JSON object per line (the default: for log collectors).
    case json
    /// `time level label: message key=value…` (for people at a terminal).
    case text
}

public enum LoggingSetup {
    private static let done = Mutex(false)

    /// Makes every `Logger` of this process write `format` at `level` and above to standard
    /// error, tokens redacted. swift-log allows one bootstrap per process; later calls are ignored.
    public static func bootstrap(level: Logger.Level, format: LogFormat, sink: @escaping LogSink = LogSinks.standardError) {
        done.withLock { done in
            guard !done else { return }
            done = true
            LoggingSystem.bootstrap { label in
                var handler = LineLogHandler(label: label, format: format, sink: sink)
                handler.logLevel = level
                return handler
            }
        }
    }
}
