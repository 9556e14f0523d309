import Foundation
import Synchronization
import Threading

/// The HTTP/2 client's own engine on one dedicated thread (``HTTP2Client/Engine/nghttp2``): its
/// connections (``NativeConnection``: a TCP socket, OpenSSL, nghttp2), up to `maxConnections`,
/// and the requests waiting for a stream on them.
///
/// Each turn the thread takes the requests handed to it, puts them on connections with a free
/// stream (the oldest connection first, so that light traffic keeps to one), opens one more
/// connection when they are all busy and requests keep waiting (``StreamAdmission``'s rule),
/// writes each connection's frames of the turn together (one `SSL_write`), then waits in
/// `poll(2)` for the sockets and the wakeup pipe. Where libcurl 7.88 wrote each frame as a TLS
/// record and a `send` of its own, a turn's requests leave in one (docs/benchmarks.md).
///
/// Tasks hand requests over through a ``LoopInbox`` (a lock and a wakeup pipe); everything else
/// is confined to the thread. Hence `@unchecked Sendable`.
final class NativeLoop: @unchecked Sendable {
    /// Requests handed to this loop and not yet answered (``HTTP2Client`` chooses a loop by it).
    let requests = Atomic<Int>(0)
    /// Connections open now (connecting included), and opened so far.
    let openConnections = Atomic<Int>(0)
    let connectionsOpened = Atomic<Int>(0)
    /// Connections judged dead and closed so far.
    let deadConnections = Atomic<Int>(0)

    let configuration: HTTP2Client.Configuration
    /// When to open another connection.
    private let demand: ConnectionDemand
    private let pacer: RequestPacer
    private let context: TLSContext
    /// Requests handed over by tasks, and the thread's wakeup.
    private let inbox: LoopInbox<NativeTransfer>
    private var done: DispatchSemaphore?

    // The loop's thread only:
    private var connections: [NativeConnection] = []
    /// Requests waiting for a stream, a line per server.
    private var lines: [WaitingLine] = []
    private var resolver = NativeResolver()
    private let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
    private var pollSet: [pollfd] = []
    private let liveness: ConnectionLiveness?
    private var nextCheck = ContinuousClock.now

    init(configuration: HTTP2Client.Configuration, maxConnections: Int, pacer: RequestPacer) throws(HTTP2ClientError) {
        self.configuration = configuration
        self.demand = ConnectionDemand(streamsPerConnection: configuration.maxConcurrentStreams, maxConnections: maxConnections)
        self.pacer = pacer
        self.liveness = configuration.livenessTimeout > .zero ? ConnectionLiveness(silence: configuration.livenessTimeout) : nil
        self.context = try TLSContext(caFile: configuration.caFile)
        self.inbox = try LoopInbox()
        done = DedicatedThread.start(name: "pb.h2") { [self] in run() }
    }

    deinit { readBuffer.deallocate() }

    /// Queues a request (any thread); `completion` gets its outcome on the loop's thread.
    func submit(_ request: HTTPRequest, completion: @escaping NativeTransfer.Completion) {
        guard let target = NativeTarget(url: request.url) else {
            return completion(
                .failure(
                    HTTP2ClientError(
                        code: .invalidRequest, message: "bad URL \(request.url): the nghttp2 engine takes https:// URLs only", isRetryable: false)))
        }
        requests.add(1, ordering: .relaxed)
        let transfer = NativeTransfer(request: request, target: target, timeout: configuration.requestTimeout) { [self] result in
            requests.subtract(1, ordering: .relaxed)
            completion(result)
        }
        if !inbox.put(transfer, paced: request.paced) { transfer.complete(.failure(.shutdownError)) }
    }

    /// Fails pending and in-flight requests with `.shutdown` and stops the thread.
    func shutdown() async {
        requestShutdown()
        guard let done else { return }
        await DedicatedThread.join(done)
    }

    func requestShutdown() {
        inbox.requestShutdown()
    }

    // MARK: The loop's thread

    private func run() {
        Self.blockSIGPIPE()
        while true {
            let now = ContinuousClock.now
            let pacedRoom = pacedRoom()
            let (incoming, stopping, nextSlot) = inbox.queued.withLock { s -> ([NativeTransfer], Bool, ContinuousClock.Instant?) in
                if s.shuttingDown { return (s.takeAll(), true, nil) }
                var taken = s.pending
                s.pending.removeAll(keepingCapacity: true)
                s.pacedArrived = false
                // Paced requests leave in order, each at its slot (RequestPacer).
                let (due, nextSlot) = s.takeDuePaced(at: now, limit: pacedRoom) { slot(of: $0, at: now) }
                for transfer in due { transfer.slotCame(at: now) }
                taken += due
                return (taken, false, nextSlot)
            }
            if stopping { return stop(incoming) }
            for transfer in incoming {
                guard transfer.deadline > now else {
                    transfer.complete(.failure(notSentError(transfer)))
                    continue
                }
                line(for: transfer.target).append(transfer)
            }
            admit(at: now)
            for connection in connections { connection.flush() }
            let timeout = waitLimit(at: now, nextSlot: nextSlot)
            if timeout > 0 {
                let parked = inbox.queued.withLock { s -> Bool in
                    guard s.pending.isEmpty && !s.pacedArrived else { return false }
                    s.parked = true
                    s.woken = false
                    return true
                }
                wait(milliseconds: parked ? timeout : 0)
                if parked { inbox.unpark() }
            } else {
                wait(milliseconds: 0)
            }
            let after = ContinuousClock.now
            if after >= nextCheck {
                nextCheck = after + Self.checkInterval
                check(at: after)
            }
            requeueRefused()
            removeClosed()
        }
    }

    /// How many paced requests a turn may take (and reserve their slots): every one due while a
    /// stream is free; else only enough to have a connection opened, one while none is up, as
    /// many as press for another (``ConnectionDemand``) when all are busy. A slot spent waiting
    /// for a connection would let the requests behind it leave together once it is up, over the
    /// rate (``RequestPacer``; the libcurl loop holds them the same way, ``StreamAdmission``).
    private func pacedRoom() -> Int {
        if connections.contains(where: { $0.freeStreams > 0 }) { return .max }
        let queued = lines.reduce(0) { $0 + $1.transfers.count }
        let wanted = connections.contains { $0.phase == .ready } ? demand.pressingCount : 1
        return max(0, wanted - queued)
    }

    /// Requests a server refused unprocessed (a GOAWAY's, most often, read or found as frames
    /// went out, on connections open or closed since): first in line again, in their order.
    private func requeueRefused() {
        for connection in connections {
            for transfer in connection.takeRefused().reversed() { line(for: transfer.target).putBack(transfer) }
        }
    }

    /// A write to a socket the peer reset raises SIGPIPE, which ends the process unless handled.
    /// OpenSSL writes with plain `write(2)` (libcurl sends with `MSG_NOSIGNAL`): the signal is
    /// blocked on this thread, so the write fails with EPIPE instead, and the process's own
    /// handling of SIGPIPE is left as it was.
    private static func blockSIGPIPE() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// How often timeouts, liveness and idle connections are looked at.
    static let checkInterval: Duration = .milliseconds(50)

    /// The line of requests to `target`'s server.
    private func line(for target: NativeTarget) -> WaitingLine {
        if let line = lines.first(where: { $0.serves(target) }) { return line }
        let line = WaitingLine(host: target.host, port: target.port)
        lines.append(line)
        return line
    }

    /// Puts waiting requests on free streams, filling the oldest connection with room first;
    /// opens a connection when they are all busy.
    private func admit(at now: ContinuousClock.Instant) {
        for line in lines {
            var connection = connectionWithRoom(for: line)
            while let transfer = line.first, let c = connection {
                if transfer.deadline <= now {
                    line.removeFirst()
                    transfer.complete(.failure(notSentError(transfer)))
                    continue
                }
                if c.start(transfer) { line.removeFirst() }
                if c.freeStreams <= 0 { connection = connectionWithRoom(for: line) }
            }
            let waited = line.waited(at: now)
            if line.first != nil { openConnection(for: line, waiting: line.transfers.count, waitingFor: waited) }
        }
    }

    private func connectionWithRoom(for line: WaitingLine) -> NativeConnection? {
        connections.first { $0.freeStreams > 0 && line.serves($0.target) }
    }

    /// Opens one more connection to `line`'s server when ``ConnectionDemand`` says so.
    private func openConnection(for line: WaitingLine, waiting: Int, waitingFor: Duration) {
        guard let target = line.first?.target else { return }
        let toServer = connections.filter { line.serves($0.target) }
        let server = ConnectionDemand.Server(
            opening: toServer.contains { $0.phase == .connecting || $0.phase == .handshaking }, allGoingAway: toServer.allSatisfy(\.goingAway))
        guard demand.shouldOpen(open: connections.count, server: server, waiting: waiting, waitingFor: waitingFor) else { return }
        let connection: NativeConnection
        switch resolver.resolve(target.host, port: target.port) {
        case .failure(let error): return line.failAll(error)
        case .success(let addresses):
            guard !addresses.isEmpty else {
                return line.failAll(.init(code: .couldNotConnect, message: "\(target.host) has no address", isRetryable: true))
            }
            connection = NativeConnection(target: target, addresses: addresses, maxStreams: demand.streamsPerConnection)
        }
        connections.append(connection)
        openConnections.add(1, ordering: .relaxed)
        connectionsOpened.add(1, ordering: .relaxed)
    }

    /// The longest `poll` may wait, in ms: until the next paced slot or check, 1 s at most.
    private func waitLimit(at now: ContinuousClock.Instant, nextSlot: ContinuousClock.Instant?) -> Int {
        var limit = 1000
        if let nextSlot { limit = min(limit, (nextSlot - now).wholeMilliseconds) }
        if lines.contains(where: { $0.first != nil }) || connections.contains(where: { $0.waiting > 0 || $0.phase != .ready }) {
            limit = min(limit, (nextCheck - now).wholeMilliseconds)
        }
        return max(limit, 0)
    }

    private func wait(milliseconds: Int) {
        pollSet.removeAll(keepingCapacity: true)
        pollSet.append(pollfd(fd: inbox.wakeup.readEnd, events: Int16(POLLIN), revents: 0))
        for connection in connections { pollSet.append(pollfd(fd: connection.socket, events: connection.pollEvents, revents: 0)) }
        let ready = pollSet.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), Int32(milliseconds)) }
        guard ready > 0 else { return }
        if pollSet[0].revents != 0 { inbox.wakeup.drain() }
        for (i, connection) in connections.enumerated() where pollSet[i + 1].revents != 0 {
            connection.handle(revents: pollSet[i + 1].revents, context: context, buffer: readBuffer)
        }
    }

    /// Timeouts, connections that take too long to open, dead ones and idle ones.
    private func check(at now: ContinuousClock.Instant) {
        for line in lines { line.expire(at: now) { notSentError($0) } }
        for transfer in inbox.queued.withLock({ $0.takeExpired(at: now, notAfter: \.request.notAfter) }) {
            transfer.complete(.failure(notSentError(transfer)))
        }
        for connection in connections {
            switch connection.phase {
            case .connecting, .handshaking:
                if now - connection.openedAt >= configuration.connectTimeout {
                    connection.close(
                        .init(
                            code: .timeout, message: "connecting to \(connection.target.authority) took over \(configuration.connectTimeout)",
                            isRetryable: true))
                }
            case .ready:
                checkStreams(of: connection, at: now)
                if connection.phase == .ready, connection.streams.isEmpty,
                    connection.goingAway || now - connection.idleSince >= configuration.idleConnectionTimeout
                {
                    connection.drain()
                    connection.flush()
                    connection.close(nil)
                }
            case .closed: break
            }
        }
    }

    /// Times out its requests past their deadline; judges it dead (``ConnectionLiveness``), or
    /// asks it for proof of life when it has been silent for half of that.
    private func checkStreams(of connection: NativeConnection, at now: ContinuousClock.Instant) {
        guard connection.waiting > 0 else { return }
        let silentFor = now - connection.lastReceived
        let expired = connection.streams.values.filter { !$0.isFinished && $0.deadline <= now }
        // A request that timed out with nothing received since it went: the connection is dead,
        // and a retry must not take it (ConnectionLiveness.diedUnder).
        let diedUnder =
            liveness != nil && expired.contains { ConnectionLiveness.diedUnder(requestThatWaited: now - ($0.startedAt ?? now), silentFor: silentFor) }
        let oldest = connection.oldestWaiting.map { now - $0 }
        let silent = liveness.map { !$0.dead([.init(socket: connection.socket, silentFor: silentFor, oldestRequest: oldest)]).isEmpty } ?? false
        if diedUnder || silent {
            let requests = connection.waiting
            deadConnections.add(1, ordering: .relaxed)
            connection.close(.deadConnection(to: connection.target.authority))
            configuration.onDeadConnection?(DeadConnection(authority: connection.target.authority, requests: requests, silentFor: silentFor))
            return
        }
        for transfer in expired { connection.timedOut(transfer, error: timeoutError(transfer)) }
        if let liveness, connection.waiting > 0, silentFor * 2 >= liveness.silence { connection.ping() }
    }

    /// For a request still waiting (its pacing slot, a stream, a connection) at its deadline.
    private func notSentError(_ transfer: NativeTransfer) -> HTTP2ClientError {
        HTTP2ClientError(
            code: .timeout, message: "not sent to \(transfer.target.authority) before its deadline: it waited for its turn", isRetryable: true)
    }

    private func timeoutError(_ transfer: NativeTransfer) -> HTTP2ClientError {
        HTTP2ClientError(
            code: .timeout, message: "no answer from \(transfer.target.authority) within \(transfer.request.timeout ?? configuration.requestTimeout)",
            isRetryable: true)
    }

    /// Drops closed connections; a connection that failed before it was ready fails the requests
    /// waiting for its server, unless another connection to it is up.
    private func removeClosed() {
        guard connections.contains(where: { $0.phase == .closed }) else { return }
        var open: [NativeConnection] = []
        var failed: [NativeConnection] = []
        for connection in connections {
            if connection.phase == .closed {
                openConnections.subtract(1, ordering: .relaxed)
                if !connection.wasReady, connection.closeError != nil { failed.append(connection) }
            } else {
                open.append(connection)
            }
        }
        connections = open
        for connection in failed {
            let line = line(for: connection.target)
            if !open.contains(where: { line.serves($0.target) && $0.phase == .ready }), let error = connection.closeError { line.failAll(error) }
        }
    }

    private func stop(_ incoming: [NativeTransfer]) {
        for transfer in incoming { transfer.complete(.failure(.shutdownError)) }
        for line in lines { line.failAll(.shutdownError) }
        for connection in connections {
            connection.close(.shutdownError)
            for transfer in connection.takeRefused() { transfer.complete(.failure(.shutdownError)) }
            openConnections.subtract(1, ordering: .relaxed)
        }
        connections.removeAll()
    }

    /// When a paced `transfer` may go: its slot, reserved the first time it is asked.
    private func slot(of transfer: NativeTransfer, at now: ContinuousClock.Instant) -> ContinuousClock.Instant {
        if let slot = transfer.slot { return slot }
        let slot = pacer.reserve(askedAt: now)
        transfer.slot = slot
        return slot
    }
}
