import Foundation
import ProcessHarness
import Synchronization
import Threading

/// Runs the built `pushbridge` executable (beside the test bundle) in the repository root with
/// `stdin` as its input, on a thread of its own (`offPool`): a pool thread blocked for the run
/// stalls every other test. Its standard output and error come back apart.
public func runPushbridge(_ args: [String], stdin: String? = nil) async throws -> (status: Int32, out: String, err: String) {
    try await offPool { try runPushbridgeBlocking(args, stdin: stdin) }
}

private func runPushbridgeBlocking(_ args: [String], stdin: String?) throws -> (status: Int32, out: String, err: String) {
    let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("pushbridge")
    let p = Process()
    p.executableURL = exe
    p.arguments = args
    p.currentDirectoryURL = URL(fileURLWithPath: Repository.root)
    let out = Pipe()
    let err = Pipe()
    let input = Pipe()
    p.standardOutput = out
    p.standardError = err
    p.standardInput = input
    try SpawnGuard.withLock { try p.run() }
    // Both streams are read at once: read one to its end first, and a command that fills the
    // other's pipe (64 KiB) blocks on it for ever.
    let errors = Mutex(Data())
    let errorsRead = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        let e = err.fileHandleForReading.readDataToEndOfFile()
        errors.withLock { $0 = e }
        errorsRead.signal()
    }
    if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
    try input.fileHandleForWriting.close()
    let o = out.fileHandleForReading.readDataToEndOfFile()
    errorsRead.wait()
    let e = errors.withLock { $0 }
    p.waitUntilExit()
    return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
}
