import Foundation

/// Keeps the process from spawning a child while a socket it must bind again at once is being
/// closed.
///
/// A child between fork and exec holds a copy of every descriptor of the parent, close-on-exec
/// or not. A listening socket closed by the parent in that moment stays open, listening, in
/// the child, and binding its port again fails. librdkafka's mock cluster does exactly that
/// when a broker goes down (it closes the broker's listener and binds the same port at once,
/// to keep it) and aborts the process when the bind fails: a test spawning `pushbridge` or
/// openssl beside a test taking a broker down crashed a full test run. Spawns and such closes
/// both take this lock; a spawn holds it for about a millisecond (`posix_spawn` returns once
/// the child has exec'd).
public enum SpawnGuard {
    private static let lock = NSLock()

    public static func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}
