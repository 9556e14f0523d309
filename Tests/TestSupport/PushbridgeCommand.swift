import Foundation
import ProcessHarness

/// Runs the built `pushbridge` executable (beside the test bundle) in the repository root with
/// `stdin` as its input, on a thread of its own (`offPool`): a pool thread blocked for the run
/// stalls every other test. Its standard output and error come back apart.
public func runPushbridge(_ args: [String], stdin: String? = nil) async throws -> (status: Int32, out: String, err: String) {
    try await offPool { try runPushbridgeBlocking(args, stdin: stdin) }
}

private func runPushbridgeBlocking(_ args: [String], stdin: String?) throws -> (status: Int32, out: String, err: String) {
    let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("pushbridge")
    // PipedCommand, not Foundation's Process, whose run() can crash this process (PipedCommand says why).
    let r = try PipedCommand.run(exe.path, args, directory: Repository.root, input: Array((stdin ?? "").utf8))
    return (r.status, String(decoding: r.output, as: UTF8.self), String(decoding: r.error, as: UTF8.self))
}
