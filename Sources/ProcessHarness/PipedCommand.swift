import Foundation
import Threading

#if canImport(Glibc)
    import Glibc
#endif

/// A command run to its end with its standard input given and its standard output and error
/// read apart, spawned with `posix_spawn` (as ``ChildProcess`` is) and reaped with `waitpid`.
///
/// Not Foundation's `Process`: on Linux its `run()` (swift-corelibs-foundation through Swift
/// 6.3.x) lists /proc/self/fd to find the descriptors to close in the child, and copies each
/// entry's whole 256-byte `d_name` although glibc's `readdir` records are about 24 bytes. With
/// about 1,400 descriptors open, as a full test run has, the list fills glibc's 32 KiB buffer,
/// the copy reads past its end, and when the page after it is not mapped the test process dies
/// ("Bad pointer dereference" in `__memcpy_…` ← `Process.run()`; the address sanitizer reports
/// a heap-buffer-overflow in `findMaximumOpenFromProcSelfFD` on every such call). Fixed upstream
/// after 6.3: https://github.com/swiftlang/swift-corelibs-foundation/pull/5472
public enum PipedCommand {
    public struct Result: Sendable {
        /// The exit status, or 128 + the signal that killed it (as a shell reports it).
        public var status: Int32
        public var output: [UInt8]
        public var error: [UInt8]
    }

    /// Runs `executable` (a path) with `arguments` in `directory` (nil: this process's), this
    /// process's environment, `input` on its standard input, and no other descriptor of ours.
    /// Blocks until it exits: call it from a thread of its own (``offPool(_:)``).
    public static func run(_ executable: String, _ arguments: [String], directory: String? = nil, input: [UInt8] = []) throws -> Result {
        let stdin = try PipeEnds()
        let stdout = try PipeEnds()
        let stderr = try PipeEnds()
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdin.read, 0)
        posix_spawn_file_actions_adddup2(&actions, stdout.write, 1)
        posix_spawn_file_actions_adddup2(&actions, stderr.write, 2)
        guard SpawnActions.addCloseFrom(&actions, 3) == 0 else { throw HarnessError("posix_spawn_file_actions_addclosefrom_np failed") }
        if let directory, SpawnActions.addChdir(&actions, directory) != 0 {
            throw HarnessError("posix_spawn_file_actions_addchdir_np \(directory) failed")
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Its own process group, as Foundation's Process puts it: a ^C to the tests is not its.
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        posix_spawnattr_setpgroup(&attributes, 0)
        var cArgs = ([executable] + arguments).map { strdup($0) } + [nil]
        var cEnv = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in cArgs + cEnv { free(pointer) } }
        var pid: pid_t = 0
        let rc = SpawnGuard.withLock { posix_spawn(&pid, executable, &actions, &attributes, &cArgs, &cEnv) }
        guard rc == 0 else { throw HarnessError("posix_spawn \(executable): \(String(cString: strerror(rc)))") }
        stdout.closeWrite()
        stderr.closeWrite()
        let (output, error) = exchange(input, stdin: stdin, stdout: stdout.read, stderr: stderr.read)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let signal = status & 0x7f
        return Result(status: signal == 0 ? (status >> 8) & 0xff : 128 + signal, output: output, error: error)
    }

    /// Writes `input` and reads both outputs until the child has closed them (it exited), all at
    /// once: a child that fills one pipe (64 KiB) while the other is read would block for ever.
    /// Our read end of its standard input stays open meanwhile, so writing to a child that
    /// exited without reading fills the pipe instead of raising SIGPIPE (which would end this
    /// process); what is left is dropped once its outputs have closed.
    private static func exchange(_ input: [UInt8], stdin: PipeEnds, stdout: Int32, stderr: Int32) -> (output: [UInt8], error: [UInt8]) {
        var output: [UInt8] = []
        var error: [UInt8] = []
        var written = 0
        if input.isEmpty {
            stdin.closeWrite()
        } else {
            _ = fcntl(stdin.write, F_SETFL, fcntl(stdin.write, F_GETFL) | O_NONBLOCK)
        }
        var open: [Int32] = [stdout, stderr]
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while !open.isEmpty {
            var fds = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            if written < input.count { fds.append(pollfd(fd: stdin.write, events: Int16(POLLOUT), revents: 0)) }
            guard poll(&fds, nfds_t(fds.count), -1) >= 0 || errno == EINTR else { break }
            for entry in fds where entry.revents != 0 {
                if entry.fd == stdin.write {
                    let n = input.withUnsafeBytes { Glibc.write(stdin.write, $0.baseAddress! + written, $0.count - written) }
                    if n > 0 { written += n }
                    if n < 0 && errno != EAGAIN && errno != EINTR { written = input.count }  // it will not read it
                    if written == input.count { stdin.closeWrite() }
                    continue
                }
                let n = chunk.withUnsafeMutableBytes { Glibc.read(entry.fd, $0.baseAddress, $0.count) }
                if n > 0 {
                    if entry.fd == stdout { output += chunk[..<n] } else { error += chunk[..<n] }
                } else if n == 0 || (errno != EAGAIN && errno != EINTR) {
                    open.removeAll { $0 == entry.fd }
                }
            }
        }
        stdin.closeWrite()  // the rest of the input, if it exited without reading it all
        return (output, error)
    }

    /// A pipe whose descriptors are closed on exec (the child gets its copies by `dup2`) and
    /// when it is released.
    private final class PipeEnds {
        let read: Int32
        private(set) var write: Int32

        init() throws {
            var fds: [Int32] = [-1, -1]
            guard SpawnActions.pipe2(&fds, O_CLOEXEC) == 0 else { throw HarnessError("pipe2: \(String(cString: strerror(errno)))") }
            (read, write) = (fds[0], fds[1])
        }

        func closeWrite() {
            if write >= 0 { close(write) }
            write = -1
        }

        deinit {
            close(read)
            closeWrite()
        }
    }
}

/// glibc's `posix_spawn_file_actions_*_np` (`addclosefrom_np` 2.34+, `addchdir_np` 2.29+) and
/// `pipe2`, which Swift's Glibc module does not declare: they need `_GNU_SOURCE`.
enum SpawnActions {
    typealias Actions = UnsafeMutablePointer<posix_spawn_file_actions_t>

    static let addCloseFrom: @convention(c) (Actions, Int32) -> Int32 = function("posix_spawn_file_actions_addclosefrom_np")
    static let addChdir: @convention(c) (Actions, UnsafePointer<CChar>) -> Int32 = function("posix_spawn_file_actions_addchdir_np")
    static let pipe2: @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32 = function("pipe2")

    private static func function<F>(_ name: String) -> F {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), name) else { fatalError("glibc without \(name) (needs 2.34+)") }
        return unsafeBitCast(symbol, to: F.self)
    }
}
