import Synchronization

// A consumer the cluster refuses from the start ends instead of retrying for ever.
//
// librdkafka retries every broker error, a refused password or an untrusted broker certificate
// included: it reports each attempt (`_AUTHENTICATION`, `_SSL`, the broker's authorization
// codes) and tries again, so a misconfigured client would wait silently for good. Until the
// cluster has answered this consumer once (a rebalance, a message, a blocking call's answer),
// such an error ends it: `messages` throws it and blocking calls under way fail with it. Later,
// the same codes can be passing (a broker restarting mid-handshake reports `_AUTHENTICATION`
// "SASL handshake failed: Broker transport failure"): they are reported and retried as before.
extension RDKafkaConsumer {
    /// The cluster answered: refusals from now on are reported, not fatal.
    func heardFromCluster() {
        state.withLock { $0.heard = true }
    }

    /// Reports a client error; one that refuses access before the cluster ever answered is this
    /// consumer's start-up failure (the poll loop ends with it).
    func report(_ error: KafkaError) {
        guard error.refusesAccess else { return errorHandler(error) }
        let (failure, pending): (KafkaError?, [@Sendable (KafkaError) -> Void]) = state.withLock { s in
            guard !s.heard, s.startupFailure == nil else { return (nil, []) }
            let failure = KafkaError(
                code: error.code, message: "the cluster refuses this client: \(error.message)", isRetryable: false, isFatal: true)
            s.startupFailure = failure
            defer { s.pendingCalls = [:] }
            return (failure, Array(s.pendingCalls.values))
        }
        errorHandler(failure ?? error)
        if let failure { for fail in pending { fail(failure) } }
    }
}

/// Resumes a continuation with the first answer given, once; later answers are dropped.
final class OnceAnswer<T: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<T, Never>?>

    init(_ continuation: CheckedContinuation<T, Never>) {
        self.continuation = Mutex(continuation)
    }

    func give(_ value: T) {
        let c = continuation.withLock { c in
            defer { c = nil }
            return c
        }
        c?.resume(returning: value)
    }
}
