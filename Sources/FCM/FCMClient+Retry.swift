import Synchronization

/// What an attempt's outcome means for the send and for the client: done, again at once, or
/// after a backoff; the project's quota pause, a throttled device's or topic's hold, and
/// whether FCM is answering (whose waits a send's retry budget leaves out).
extension FCMClient {
    /// What a send carries from one attempt to the next, besides its result.
    struct RetryState {
        var started: ContinuousClock.Instant
        var waitedAtStart: Duration = .zero
        var refreshed = false
        /// Attempts whose connection was closed as dead, and the time they took: neither counts
        /// against the retry policy (``FCMError/Code/deadConnection``).
        var deadConnections = 0
        var deadConnectionTime: Duration = .zero
        /// No attempt starts at or after it, and none outlives it (nil: the retry budget alone).
        var deadline: ContinuousClock.Instant?

        /// `delay` from now, or less: what is left until the deadline.
        func wait(_ delay: Duration) -> Duration {
            guard let deadline else { return delay }
            return max(.zero, min(delay, deadline - .now))
        }

        /// `instant`, or the deadline if earlier.
        func wait(until instant: ContinuousClock.Instant) -> ContinuousClock.Instant {
            deadline.map { min($0, instant) } ?? instant
        }
    }

    enum NextAttempt {
        case done
        /// At once: a wait, if any, is the target's hold, which the loop's top observes.
        case again
        case after(Duration)
    }

    /// Classifies an attempt's outcome, records it and says whether and when to try again.
    @inline(never)
    func afterAttempt(
        _ result: inout SendResult, _ retry: inout RetryState, attemptStarted: ContinuousClock.Instant, target: MessageTarget?
    ) -> NextAttempt {
        let now = ContinuousClock.now
        if result.attemptLog != nil { result.attemptLog?.append(SendResult.Attempt(started: attemptStarted, ended: now, outcome: result.outcome)) }
        guard case .failure(var error) = result.outcome else {
            let change = updateHealth { h in
                let change = h.availability.answered(at: now, success: true)
                if let target, !h.backoff.isEmpty { h.backoff.cleared(target) }
                return change
            }
            if let change { configuration.onAvailabilityChange?(change) }
            return .done
        }
        if error.isShutdown || error.code == .deadline { return .done }
        if error.code == .deadConnection {
            // Not the message's fault, and no answer from FCM: at once, on another connection
            // (the dead one is closed), with no backoff, attempt or budget time spent on it.
            _ = recordFailure(error, attemptStarted: attemptStarted, at: now, waitedAtStart: retry.waitedAtStart)
            retry.deadConnections += 1
            retry.deadConnectionTime += now - attemptStarted
            return .again
        }
        // For a throttled target, its refusals in a row grow the backoff, not this send's attempts.
        var strikes = result.attempts - retry.deadConnections
        switch error.kind {
        case .quota:
            let scope = resolveQuotaScope(error.quotaScope, target: target, now: now)
            error.quotaScope = scope
            result.quotaRefusals.append(scope)
            if scope == .project {
                gate.pause(for: max(configuration.retry.quotaPause, error.retryAfter ?? .zero))
            } else if let target {
                strikes = updateHealth { $0.backoff.strike(target) }
            }
        case .auth:
            if retry.refreshed { return .done }
            retry.refreshed = true
        default: break
        }
        result.outcome = .failure(error)
        // A dead connection's attempt while FCM answered nothing else is left out twice (as
        // waiting and as its own time): lenient only while FCM is not answering.
        let budgetUsed = max(
            .zero,
            now - retry.started - retry.deadConnectionTime
                - recordFailure(error, attemptStarted: attemptStarted, at: now, waitedAtStart: retry.waitedAtStart))
        guard let delay = configuration.retry.delay(afterAttempt: strikes, elapsed: budgetUsed, error: error, random: Double.random(in: 0...1))
        else { return .done }
        if error.kind == .quota, error.quotaScope != .project, let target {
            // Every send to the target waits this long, this one at the top of the loop.
            updateHealth { $0.backoff.hold(target, until: now + delay, now: now) }
            return .again
        }
        return delay > .zero ? .after(delay) : .again
    }

    @inline(never)
    static func sleep(until instant: ContinuousClock.Instant) async {
        try? await Task.sleep(until: instant, clock: .continuous)
    }

    @inline(never)
    static func sleep(for delay: Duration) async {
        try? await Task.sleep(for: delay)
    }

    /// Notes what a failure says about FCM: nothing at all (a 5xx, no answer, the project's
    /// quota: FCM is not answering) or an answer about this message. Returns how long this
    /// client has waited on FCM since a send's start, which its budget leaves out.
    private func recordFailure(
        _ error: FCMError, attemptStarted: ContinuousClock.Instant, at now: ContinuousClock.Instant, waitedAtStart: Duration
    ) -> Duration {
        let (waited, change) = health.withLock { h in
            let change =
                if error.kind == .retryable || error.kind == .configuration || error.quotaScope == .project {
                    h.availability.failedTransiently(since: attemptStarted, reason: error.description, at: now)
                } else {
                    h.availability.answered(at: now, success: false)
                }
            return (h.availability.waited(upTo: now) - waitedAtStart, change)
        }
        if let change { configuration.onAvailabilityChange?(change) }
        return waited
    }

    /// A QUOTA_EXCEEDED whose answer does not say whose quota it is: the target's while sends to
    /// others get through, otherwise the project's, as it always was
    /// (``FCMAvailability/refusedOwnQuota(_:at:)``).
    private func resolveQuotaScope(_ scope: FCMError.QuotaScope?, target: MessageTarget?, now: ContinuousClock.Instant) -> FCMError.QuotaScope {
        guard let target else { return .project }
        let perTarget: FCMError.QuotaScope = target.isDevice ? .device : .topic
        switch scope ?? .undetermined {
        case .project: return .project
        case .device, .topic: return perTarget
        case .undetermined:
            return health.withLock { $0.availability.refusedOwnQuota(target, at: now) } ? perTarget : .project
        }
    }

    /// When sends to `target` may go again, if FCM throttled it. Without any throttled target
    /// (the usual case) this takes no lock.
    func heldUntil(_ target: MessageTarget) -> ContinuousClock.Instant? {
        guard anyHeld.load(ordering: .relaxed) else { return nil }
        return health.withLock { $0.backoff.heldUntil(target, now: .now) }
    }

    /// Changes the health state under its lock, keeping ``anyHeld`` true to it.
    private func updateHealth<T>(_ change: (inout Health) -> T) -> T {
        health.withLock { h in
            let result = change(&h)
            anyHeld.store(!h.backoff.isEmpty, ordering: .relaxed)
            return result
        }
    }
}
