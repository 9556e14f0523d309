import CCurl
import Foundation
import Synchronization
import Threading

/// Runs the libcurl multi interface on one dedicated thread, over as many connections as its
/// transfers need, up to `maxConnections`: libcurl opens another when every stream of the open
/// ones is in use, and retires those left idle.
///
/// The thread waits in `poll(2)` on the sockets libcurl names (``CurlSocketInterest``) and hands
/// libcurl each ready one (`curl_multi_socket_action`), so an answer costs a visit to the
/// transfers of its own connection, not to every transfer in flight.
///
/// Tasks hand transfers over through a ``LoopInbox`` (a lock and a wakeup pipe); everything
/// else (easy handles, the active table, callbacks) is confined to the multi thread. Hence
/// `@unchecked Sendable`.
final class CurlMultiLoop: @unchecked Sendable {
    /// Requests sent through this loop and not yet answered (kept by ``HTTP2Client``, which
    /// chooses a loop by it).
    let requests = Atomic<Int>(0)
    /// Easy handles kept for reuse now (read by tests).
    let pooledHandles = Atomic<Int>(0)

    /// Easy handles kept for reuse at most: a pool as large as the busiest moment's transfers
    /// would keep them all once the traffic moved to another thread. A turn's finished handles
    /// go back to the pool before the next turn starts transfers, so steady traffic reuses its
    /// handles; a drop in traffic, or a turn that finishes more than this many, frees some.
    static let idleHandleLimit = 256

    let configuration: HTTP2Client.Configuration
    let multi: CurlMultiHandle
    /// Transfers handed over by tasks, and the thread's wakeup.
    private let inbox: LoopInbox<CurlTransfer>
    /// The TLS session cache of this thread's handles.
    private let share: CurlShareHandle
    /// The client's rate for paced requests, shared with its other threads.
    private let pacer: RequestPacer
    // Multi thread only, as below: what libcurl may take now. The rest wait in `pending`, so
    // libcurl keeps no queue of its own (which it walks on every turn) and opens connections
    // one at a time.
    private var admission: StreamAdmission
    /// Since when transfers have waited for a stream, if they do (the thread's only).
    private var pendingSince: ContinuousClock.Instant?
    private var done: DispatchSemaphore?

    // Multi thread only:
    var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    /// Handles of finished transfers, for the next ones: at most ``idleHandleLimit``.
    private var idleHandles: [CurlEasyHandle] = [] {
        didSet { pooledHandles.store(idleHandles.count, ordering: .relaxed) }
    }
    /// Transfers whose body may not all have gone out yet (``releaseSentUploadBuffers()``): the
    /// ones started in the last turns, so walking them costs little.
    private var uploading: [CurlTransfer] = []
    /// The last header list built; reused while requests carry the same headers (FCM's do).
    private var lastHeaders: CurlHeaderList?
    /// When a transfer was last in libcurl's hands.
    private var lastBusy = ContinuousClock.now
    /// The probe out now (``StreamAdmission``), until its connection is ready or it ends, and
    /// the connections open when it went out.
    private var probe: (transfer: CurlTransfer, openBefore: Int)?
    /// When the corked sockets' writes go (``WriteFlushSchedule``).
    private var writeSchedule: WriteFlushSchedule
    /// Which connections are dead (nil: the client's `livenessTimeout` is zero), and when to
    /// look next.
    var liveness: ConnectionLiveness?
    var nextLivenessCheck = ContinuousClock.now
    /// When the requests still queued are next looked at for their `notAfter`.
    private var nextExpiryCheck = ContinuousClock.now
    static let expiryCheckInterval: Duration = .milliseconds(50)
    /// Connections judged dead and closed so far (read by tests).
    let deadConnections = Atomic<Int>(0)

    init(configuration: HTTP2Client.Configuration, maxConnections: Int, pacer: RequestPacer) throws(HTTP2ClientError) {
        self.configuration = configuration
        self.pacer = pacer
        self.writeSchedule = WriteFlushSchedule(maxHold: configuration.writeHold)
        self.liveness = configuration.livenessTimeout > .zero ? ConnectionLiveness(silence: configuration.livenessTimeout) : nil
        self.multi = try CurlMultiHandle(
            maxConcurrentStreams: configuration.maxConcurrentStreams, maxConnections: maxConnections,
            corkable: configuration.writeHold > .zero)
        self.inbox = try LoopInbox()
        self.share = try CurlShareHandle()
        self.admission = StreamAdmission(streamsPerConnection: configuration.maxConcurrentStreams, maxConnections: maxConnections)
        done = DedicatedThread.start(name: "pb.http2") { [self] in run() }
    }

    /// Its connections, open now and opened so far.
    var connections: CurlConnectionCounter { multi.connections }

    /// Queues a transfer (any thread). Fails it at once after shutdown.
    func submit(_ transfer: CurlTransfer) {
        if !inbox.put(transfer, paced: transfer.request.paced) { transfer.complete(.failure(.shutdownError)) }
    }

    /// Fails pending and in-flight transfers with `.shutdown` and stops the thread.
    func shutdown() async {
        inbox.requestShutdown()
        guard let done else { return }
        await DedicatedThread.join(done)
    }

    /// Asks the loop to stop without waiting (from `deinit`).
    func requestShutdown() {
        inbox.requestShutdown()
    }

    // MARK: Multi thread

    private func run() {
        while true {
            let openNow = multi.connections.open.load(ordering: .relaxed)
            let now = ContinuousClock.now
            let (incoming, stopping, room, nextSlot) = inbox.queued.withLock {
                s -> ([CurlTransfer], Bool, (count: Int, probe: Bool), ContinuousClock.Instant?) in
                if s.shuttingDown { return (s.takeAll(), true, (0, false), nil) }
                // Paced requests leave in order, each at its slot (RequestPacer): those waiting
                // for theirs are not waiting for a stream, and call for no connection. Other
                // requests pass them.
                let pacedDue = s.paced.first.map { slot(of: $0, at: now, reserve: false) <= now } ?? false
                let room = admission.room(
                    active: active.count, openConnections: openNow, waiting: s.pending.count + (pacedDue ? s.paced.count : 0),
                    waitingFor: pendingSince.map { now - $0 } ?? .zero)
                var taken = Array(s.pending.prefix(room.count))
                s.pending.removeFirst(taken.count)
                let (due, nextSlot) = s.takeDuePaced(at: now, limit: room.count - taken.count) { slot(of: $0, at: now, reserve: true) }
                taken += due
                let waitingForStream = !s.pending.isEmpty || (!s.paced.isEmpty && nextSlot == nil)
                pendingSince = waitingForStream ? (pendingSince ?? now) : nil
                return (taken, false, room, nextSlot)
            }
            if stopping {
                for t in incoming { t.complete(.failure(.shutdownError)) }
                failAllActive()
                return
            }
            if now >= nextExpiryCheck {
                nextExpiryCheck = now + Self.expiryCheckInterval
                for t in inbox.queued.withLock({ $0.takeExpired(at: now, notAfter: \.request.notAfter) }) {
                    t.complete(.failure(Self.notSentError(t)))
                }
            }
            for transfer in incoming where start(transfer) && room.probe && transfer === incoming.last {
                probe = (transfer, openNow)
                admission.probeStarted()
            }
            // Only a probe opens a connection (CurlMultiHandle.allowConnections).
            multi.allowConnections(probe.map { $0.openBefore + 1 } ?? multi.connections.open.load(ordering: .relaxed))
            let full = admission.isFull(active: active.count, openConnections: multi.connections.open.load(ordering: .relaxed))
            // Parked: up to 1 s with nothing queued; 20 ms while transfers wait for a stream, as
            // they may call for a connection soon (StreamAdmission); until the next paced
            // request's slot. Else just a look (0 ms).
            let longest = inbox.queued.withLock { s -> Int in
                let nothingDue = s.pending.isEmpty && (s.paced.isEmpty || nextSlot != nil)
                guard nothingDue || full else { return 0 }
                s.parked = true
                s.woken = false
                if s.isEmpty { return 1000 }
                let untilSlot = nextSlot.map { ($0 - .now).wholeMilliseconds } ?? 1000
                return full ? min(20, untilSlot) : untilSlot
            }
            let untilFlush = writeSchedule.timeLeft(at: .now).map(\.wholeMilliseconds) ?? longest
            // A write waits from the start of the libcurl calls that made it: when they take
            // longer than the hold (a busy turn), it goes at their end, not a turn later.
            if let ranAt = wait(longest: min(longest, untilFlush)) { writeSchedule.wrote(at: ranAt) }
            if longest > 0 { inbox.unpark() }
            if writeSchedule.isDue(at: .now) {
                multi.connections.flushWrites()
                writeSchedule.flushed()
            }
            // A probe's connection can take more streams once it is negotiated (the transfer
            // has begun to send), not only once the probe is answered.
            if let p = probe?.transfer, let easy = p.easy, easy.info(offset: CURLINFO_PRETRANSFER_TIME_T) > 0 {
                probe = nil
                admission.probeFinished()
            }
            releaseSentUploadBuffers()
            var finished = 0
            multi.completed { easy, result in
                finish(easy, result)
                finished += 1
            }
            closeDeadConnections(at: .now)
            let open = multi.connections.open.load(ordering: .relaxed)
            if !active.isEmpty || !incoming.isEmpty || finished > 0 {
                lastBusy = .now
            } else if open > 0, ContinuousClock.now - lastBusy >= configuration.idleConnectionTimeout, inbox.queued.withLock({ $0.isEmpty }) {
                multi.closeConnections()
            }
        }
    }

    /// Waits up to `longest` ms (less if a libcurl timer is due sooner) for a socket of
    /// libcurl's or the wakeup pipe, then lets libcurl act on the ready sockets and due timers.
    /// Returns when libcurl began to run (and so may have written), nil if it did not.
    private func wait(longest: Int) -> ContinuousClock.Instant? {
        let timer = multi.timeout()
        let timeout = min(longest, timer ?? longest)
        var set = multi.sockets.pollSet(after: pollfd(fd: inbox.wakeup.readEnd, events: Int16(POLLIN), revents: 0))
        let ready = timeout > 0 || set.count > 1 ? set.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), Int32(timeout)) } : 0
        var ran = false
        let began = ContinuousClock.now
        if ready > 0 {
            if set[0].revents != 0 { inbox.wakeup.drain() }
            for entry in set.dropFirst() where entry.revents != 0 {
                if entry.revents & Int16(POLLNVAL) != 0 {
                    // Closed without a word to us: libcurl is done with it.
                    multi.sockets.update(socket: entry.fd, what: CURL_POLL_REMOVE)
                } else {
                    multi.socketAction(entry.fd)
                    ran = true
                }
            }
        }
        if multi.timeout() == 0 {
            multi.timeoutAction()
            ran = true
        }
        return ran ? began : nil
    }

    /// When a paced `transfer` may go: its slot, reserved the first time it is asked with
    /// `reserve` (and kept), else the slot it would get.
    private func slot(of transfer: CurlTransfer, at now: ContinuousClock.Instant, reserve: Bool) -> ContinuousClock.Instant {
        if let slot = transfer.slot { return slot }
        guard reserve else { return pacer.peek(askedAt: now) }
        let slot = pacer.reserve(askedAt: now)
        transfer.slot = slot
        return slot
    }

    /// Hands `transfer` to libcurl; false if it failed at once (and was answered), as one at or
    /// past its `notAfter` does: it is never sent.
    private func start(_ transfer: CurlTransfer) -> Bool {
        if let notAfter = transfer.request.notAfter, notAfter <= .now {
            transfer.complete(.failure(Self.notSentError(transfer)))
            return false
        }
        let easy: CurlEasyHandle
        do {
            if let reused = idleHandles.popLast() {
                easy = reused
            } else {
                easy = try CurlEasyHandle.makePooled(configuration, connections: multi.connections, share: share)
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
            transfer.complete(.failure(error))
            return false
        }
        guard multi.add(easy) == CURLM_OK else {
            transfer.complete(.failure(HTTP2ClientError(code: .other, message: "curl_multi_add_handle failed", isRetryable: true)))
            return false
        }
        easy.withPointer { active[$0] = transfer }
        transfer.startedAt = .now
        if CurlEasyHandle.canReleaseUploadBuffer { uploading.append(transfer) }
        return true
    }

    /// Frees the upload buffer of each transfer whose body has all gone out
    /// (``CurlEasyHandle/releaseUploadBuffer()``). A finished transfer's handle may serve
    /// another transfer by now, so finished ones are only dropped.
    private func releaseSentUploadBuffers() {
        guard !uploading.isEmpty else { return }
        uploading.removeAll { transfer in
            guard !transfer.isFinished, let easy = transfer.easy else { return true }
            guard easy.info(offset: CURLINFO_SIZE_UPLOAD_T) >= Int64(transfer.request.body.count) else { return false }
            easy.releaseUploadBuffer()
            return true
        }
    }

    private func finish(_ pointer: UnsafeMutableRawPointer, _ result: CURLcode) {
        guard let transfer = active.removeValue(forKey: pointer), let easy = transfer.easy else { return }
        if transfer === probe?.transfer {
            probe = nil
            admission.probeFinished()
        }
        transfer.isFinished = true
        if result == CURLE_OPERATION_TIMEDOUT { closeIfSilent(timedOut: transfer) }
        let outcome = transfer.outcome(result, proxy: configuration.proxy)
        if case .success(let response) = outcome, let time = response.answerTime, writeSchedule.answered(after: time) {
            multi.connections.setCorking(writeSchedule.corks)
        }
        multi.remove(easy)
        // The transfer's buffers die with it: no pointer to them stays in a pooled handle
        // (the error buffer is the handle's own).
        easy.set(CURLOPT_POSTFIELDS, pointer: nil)
        easy.set(CURLOPT_PRIVATE, pointer: nil)
        easy.set(CURLOPT_WRITEDATA, pointer: nil)
        easy.set(CURLOPT_HEADERDATA, pointer: nil)
        easy.set(CURLOPT_PREREQDATA, pointer: nil)
        if idleHandles.count < Self.idleHandleLimit { idleHandles.append(easy) }  // else curl_easy_cleanup
        transfer.complete(outcome)
    }

    /// How often ``closeDeadConnections(at:)`` looks: a dead connection is closed at most this
    /// long after its silence ran out.
    static let livenessCheckInterval: Duration = .milliseconds(500)

    private func failAllActive() {
        probe = nil
        for (_, transfer) in active {
            if let easy = transfer.easy { multi.remove(easy) }
            transfer.complete(.failure(.shutdownError))
        }
        active.removeAll()
        idleHandles.removeAll()
    }

    /// For a request still queued (its pacing slot, a stream) at its `notAfter`.
    static func notSentError(_ transfer: CurlTransfer) -> HTTP2ClientError {
        HTTP2ClientError(
            code: .timeout, message: "not sent to \(transfer.request.authority) before its deadline: it waited for its turn", isRetryable: true)
    }
}
