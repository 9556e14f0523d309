import HTTP2

/// Sends begun without a task waiting on them (``FCMClient/start(_:to:validateOnly:then:)``):
/// the same attempt, slot and classification as ``FCMClient/send(_:to:validateOnly:)``, with the
/// answer handed to a callback and any retry left for a task.
extension FCMClient {
    /// How a send begun by ``start(_:to:validateOnly:then:)`` stands after its first attempt.
    public enum FirstAttempt: Sendable {
        /// The send is over: acknowledged, or failed with no retry due (as ``send(_:to:validateOnly:)``
        /// would have returned it).
        case finished(SendResult)
        /// A retry is due: the send goes on, with its backoff and budget, when this is run in a task.
        case unfinished(@Sendable () async -> SendResult)
    }

    /// Why ``start(_:to:validateOnly:then:)`` did not begin a send.
    public enum StartRefusal: Error, Sendable {
        /// Every slot for sends in flight is taken: ``waitForRoom()`` (or ``whenRoom(_:)``), then
        /// start again.
        case full
        /// The send must wait first (a quota pause, a throttled target, an access token to
        /// fetch): use ``send(_:to:validateOnly:)``, which does.
        case mustWait
    }

    /// Begins a send without a task waiting on it: its first attempt goes out now, and `then`
    /// gets how it stood when FCM answered. The same send as ``send(_:to:validateOnly:)``
    /// (slots, the rate cap, classification and what the answer tells the client), for callers
    /// that keep thousands in flight: a task suspended in ``send(_:to:validateOnly:)`` holds
    /// its call chain's frames while FCM answers (docs/benchmarks.md).
    ///
    /// - Important: `then` runs on the HTTP/2 client's thread: it must be quick and must not
    ///   block. What takes longer (a retry's wait) is the `unfinished` closure, for a task.
    /// `recordingAttempts`: keep each attempt in ``SendResult/attemptLog``.
    public func start(
        _ message: [UInt8], to target: MessageTarget? = nil, validateOnly: Bool = false, recordingAttempts: Bool = false,
        then: @escaping @Sendable (FirstAttempt) -> Void
    ) -> Result<Void, StartRefusal> {
        if let target, heldUntil(target) != nil { return .failure(.mustWait) }
        guard let token = tokens.cachedToken else { return .failure(.mustWait) }
        switch gate.tryAcquire() {
        case .success: break
        case .failure(.full): return .failure(.full)
        case .failure(.paused): return .failure(.mustWait)
        }
        let body = Self.requestBody(message, validateOnly: validateOnly)
        let retry = newRetryState()
        let attemptStarted = ContinuousClock.now
        http.start(sendRequest(body, token: token)) { [self] answer in
            let (outcome, answerTime) = classify(answer, token: token)
            gate.release(answerTime: answerTime)
            var result = SendResult(outcome: outcome, attempts: 1)
            if recordingAttempts { result.attemptLog = [] }
            var state = retry
            let delay: Duration?
            switch afterAttempt(&result, &state, attemptStarted: attemptStarted, target: target) {
            case .done: return then(.finished(result))
            case .again: delay = nil
            case .after(let wait): delay = wait
            }
            then(.unfinished { [result, state] in await self.attempts(body, target: target, from: result, retry: state, after: delay) })
        }
        return .success(())
    }

    /// Returns once a send slot is free (another caller may take it first: start again), or
    /// the task is cancelled.
    public func waitForRoom() async {
        await gate.waitForRoom()
    }

    /// Runs `action` once a send slot is free, with no task waiting: at once if one is free
    /// now, else on the thread of the send that frees it (after those who asked before), so it
    /// must be quick. It returns whether its caller will start again (another caller may take
    /// the slot first); false passes the room to whoever asked next.
    public func whenRoom(_ action: @escaping @Sendable () -> Bool) {
        gate.whenRoom(action)
    }
}
