#if canImport(Glibc)
    import Glibc
#endif

/// Wakes a thread blocked in `poll(2)` from any thread: a non-blocking pipe whose read end is
/// one of the polled descriptors. Owns both ends; closes them in `deinit`.
///
/// `@unchecked Sendable`: the descriptors never change, and `write`/`read` on a pipe are safe
/// from any thread.
final class LoopWakeup: @unchecked Sendable {
    /// Poll this for `POLLIN`.
    let readEnd: Int32
    private let writeEnd: Int32

    init() throws(HTTP2ClientError) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            throw HTTP2ClientError(code: .other, message: "pipe() failed: \(String(cString: strerror(errno)))", isRetryable: false)
        }
        for fd in ends {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        (readEnd, writeEnd) = (ends[0], ends[1])
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }

    /// Makes ``readEnd`` readable (any thread). A full pipe is already readable.
    func signal() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Empties the pipe (the polling thread, after it saw ``readEnd`` readable).
    func drain() {
        var buffer = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        while withUnsafeMutableBytes(of: &buffer, { read(readEnd, $0.baseAddress, $0.count) }) > 0 {}
    }
}

extension Duration {
    /// In whole milliseconds for `poll(2)`'s timeout, rounded up (0 if not positive).
    var wholeMilliseconds: Int {
        guard self > .zero else { return 0 }
        let (seconds, attoseconds) = components
        return Int(seconds) * 1000 + Int((attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }
}
