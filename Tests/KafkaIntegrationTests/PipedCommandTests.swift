import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// How the tests run a command whose output they read (`runPushbridge`), spawned without
/// Foundation's `Process` (PipedCommand says why).
@Suite("Commands run with their input given and their output read")
struct PipedCommandTests {
    @Test("the input reaches the command; its output and error come back apart, with its exit status")
    func inputOutputAndStatus() async throws {
        let r = try await offPool { try PipedCommand.run("/bin/sh", ["-c", "cat; echo oops >&2; exit 3"], input: Array("hello\n".utf8)) }
        #expect(r.status == 3)
        #expect(String(decoding: r.output, as: UTF8.self) == "hello\n")
        #expect(String(decoding: r.error, as: UTF8.self) == "oops\n")
    }

    @Test("more than a pipe holds on both outputs and as input, in the directory given")
    func largeOutputsAndDirectory() async throws {
        let input = [UInt8](repeating: UInt8(ascii: "x"), count: 300_000)
        let script = "pwd; wc -c; head -c 200000 /dev/zero >&2; head -c 200000 /dev/zero"
        let r = try await offPool { try PipedCommand.run("/bin/sh", ["-c", script], directory: "/tmp", input: input) }
        #expect(r.status == 0)
        #expect(String(decoding: r.output.prefix(12), as: UTF8.self) == "/tmp\n300000\n")
        #expect(r.output.count == 12 + 200_000)
        #expect(r.error.count == 200_000)
    }

    @Test("a command that exits without reading its input; one killed by a signal reports 128 + the signal")
    func unreadInputAndSignal() async throws {
        let input = [UInt8](repeating: 0, count: 1_000_000)
        let unread = try await offPool { try PipedCommand.run("/bin/sh", ["-c", "exit 7"], input: input) }
        #expect(unread.status == 7)
        let killed = try await offPool { try PipedCommand.run("/bin/sh", ["-c", "kill -9 $$"]) }
        #expect(killed.status == 128 + 9)
    }

    @Test("with 1,400 more descriptors open, as a full test run has, the command inherits none of them")
    func manyDescriptorsOpen() async throws {
        let held = (0..<1_400).map { _ in open("/dev/null", O_RDONLY) }
        defer { for fd in held where fd >= 0 { close(fd) } }
        #expect(held.allSatisfy { $0 >= 0 })
        let r = try await offPool { try PipedCommand.run("/bin/ls", ["/proc/self/fd"]) }
        #expect(r.status == 0)
        // Its standard input, output and error, and the descriptor ls lists the directory with.
        #expect(String(decoding: r.output, as: UTF8.self).split(separator: "\n") == ["0", "1", "2", "3"])
    }
}
