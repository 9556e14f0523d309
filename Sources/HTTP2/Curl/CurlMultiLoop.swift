import CCurl
import Foundation
import Threading
import Synchronization

/// Runs the libcurl multi interface on one dedicated thread.
///
/// Tasks hand transfers over through `state` (a `Mutex`) and wake the thread with
/// `curl_multi_wakeup`; everything else (easy handles, the active table, callbacks) is confined
/// to the multi thread. Hence `@unchecked Sendable`.
final class CurlMultiLoop: @unchecked Sendable {
    private struct State: Sendable {
        var pending: [CurlTransfer] = []
        var shuttingDown = false
        /// The multi thread is in (or about to enter) `curl_multi_poll` with nothing queued.
        var parked = false
        /// A wakeup was sent since the thread parked; more are not needed.
        var woken = false
    }

    /// Requests sent through this loop and not yet answered (kept by ``HTTP2Client``, which
    /// gives a new request to the loop with the fewest).
    let requests = Atomic<Int>(0)

    private let configuration: HTTP2Client.Configuration
    private let multi: CurlMultiHandle
    private let state = Mutex(State())
    private var done: DispatchSemaphore?

    // Multi thread only:
    private var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    private var idleHandles: [CurlEasyHandle] = []
    /// The last header list built; reused while requests carry the same headers (FCM's do).
    private var lastHeaders: CurlHeaderList?

    init(configuration: HTTP2Client.Configuration) throws(HTTP2ClientError) {
        self.configuration = configuration
        self.multi = try CurlMultiHandle(
            maxConcurrentStreams: configuration.maxConcurrentStreams,
            maxConnectionsPerHost: configuration.maxConnectionsPerHost)
        done = DedicatedThread.start(name: "pushbridge.http2") { [self] in run() }
    }

    /// Queues a transfer (any thread). Fails it at once after shutdown.
    func submit(_ transfer: CurlTransfer) {
        let wake: Bool? = state.withLock { s in
            if s.shuttingDown { return nil }
            s.pending.append(transfer)
            // A busy loop picks the queue up on its next turn; only a parked one needs a wakeup
            // (a syscall), and only one per park.
            guard s.parked && !s.woken else { return false }
            s.woken = true
            return true
        }
        switch wake {
        case nil: transfer.continuation.resume(returning: .failure(.shutdownError))
        case true?: multi.wakeup()
        case false?: break
        }
    }

    /// Fails pending and in-flight transfers with `.shutdown` and stops the thread.
    func shutdown() async {
        state.withLock { $0.shuttingDown = true }
        multi.wakeup()
        guard let done else { return }
        await DedicatedThread.join(done)
    }

    /// Asks the loop to stop without waiting (from `deinit`).
    func requestShutdown() {
        state.withLock { $0.shuttingDown = true }
        multi.wakeup()
    }

    // MARK: Multi thread

    private func run() {
        while true {
            let (incoming, stopping) = state.withLock { s -> ([CurlTransfer], Bool) in
                if s.shuttingDown {
                    defer { s.pending.removeAll() }
                    return (s.pending, true)
                }
                let room = max(configuration.maxConcurrentStreams - active.count, 0)
                let taken = Array(s.pending.prefix(room))
                s.pending.removeFirst(taken.count)
                return (taken, false)
            }
            if stopping {
                for t in incoming { t.continuation.resume(returning: .failure(.shutdownError)) }
                failAllActive()
                return
            }
            for transfer in incoming { start(transfer) }
            _ = multi.perform()
            multi.completed { easy, result in finish(easy, result) }
            let canPark = state.withLock { s -> Bool in
                guard s.pending.isEmpty || active.count >= configuration.maxConcurrentStreams else { return false }
                s.parked = true
                s.woken = false
                return true
            }
            if canPark {
                multi.poll(timeoutMilliseconds: 1000)
                state.withLock { $0.parked = false }
            }
        }
    }

    private func start(_ transfer: CurlTransfer) {
        let easy: CurlEasyHandle
        do {
            if let reused = idleHandles.popLast() {
                easy = reused
            } else {
                easy = try CurlEasyHandle.makePooled(configuration)
            }
            let headers: CurlHeaderList
            if let last = lastHeaders, last.headers == transfer.request.headers {
                headers = last
            } else {
                headers = CurlHeaderList(transfer.request.headers)
                lastHeaders = headers
            }
            try transfer.configure(easy, configuration, headers: headers)
        } catch {
            transfer.continuation.resume(returning: .failure(error))
            return
        }
        guard multi.add(easy) == CURLM_OK else {
            transfer.continuation.resume(returning: .failure(
                HTTP2ClientError(code: .other, message: "curl_multi_add_handle failed", isRetryable: true)))
            return
        }
        easy.withPointer { active[$0] = transfer }
    }

    private func finish(_ pointer: UnsafeMutableRawPointer, _ result: CURLcode) {
        guard let transfer = active.removeValue(forKey: pointer), let easy = transfer.easy else { return }
        let outcome = transfer.outcome(result)
        multi.remove(easy)
        // The transfer's buffers die with it: no pointer to them stays in a pooled handle.
        easy.set(CURLOPT_ERRORBUFFER, pointer: nil)
        easy.set(CURLOPT_POSTFIELDS, pointer: nil)
        easy.set(CURLOPT_PRIVATE, pointer: nil)
        easy.set(CURLOPT_WRITEDATA, pointer: nil)
        easy.set(CURLOPT_HEADERDATA, pointer: nil)
        idleHandles.append(easy)
        transfer.continuation.resume(returning: outcome)
    }

    private func failAllActive() {
        for (_, transfer) in active {
            if let easy = transfer.easy { multi.remove(easy) }
            transfer.continuation.resume(returning: .failure(.shutdownError))
        }
        active.removeAll()
        idleHandles.removeAll()
    }
}
