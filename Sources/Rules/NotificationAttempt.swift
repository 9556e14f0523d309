/// What FCM's answer to one device push says about its delivery, as the stateful rules count it.
public enum PushAnswer: Hashable, Sendable {
    /// Acknowledged: a message name came back.
    case accepted
    /// Definitively refused, so not delivered: UNREGISTERED, INVALID_ARGUMENT,
    /// SENDER_ID_MISMATCH, THIRD_PARTY_AUTH_ERROR (``FactStatus/released``).
    case refused
    /// Neither (a 5xx, a timeout, a connection lost, retries spent): it may have been delivered.
    case unknown
}

/// One notification's way through the owner of its state partition (design §5.5, the order of
/// writes): dedup, then the caps; a `reserved` fact written and read back unfenced before any
/// send; the send only within ``RulesPolicy/sendLimit`` of the reservation; an outcome fact
/// after FCM's answers. A pure state machine: the owner produces the facts it returns, feeds it
/// the changelog tail and FCM's answers, and keeps the ``InFlightTable`` it begins and finishes
/// the notification in. `Tests/RulesTests`' ownership model drives the same machine through
/// every interleaving of crashes, rebalances and answers.
public struct NotificationAttempt: Sendable {
    public let notification: NotificationID
    public let subject: CapSubject
    public let caps: [CapRule]
    /// How long an acknowledged device push keeps the same push from being sent again (ms).
    public let dedupWindow: Int64
    public let policy: RulesPolicy
    /// The owner ID its facts carry (``ChangelogTail/owner``); the owner that takes it sets it.
    public var owner: String
    /// The targets (`fid:…`, `token:…`) still to push; fewer after each dedup.
    public private(set) var targets: [String]
    /// The reservation's attempt number, once reserved.
    public private(set) var attempt: UInt32 = 0
    /// The notification's subject in the state as ``decide(now:state:inFlight:)`` last read it
    /// (an earlier attempt's; the merge keeps the least): with ``subject``, every subject its
    /// merged state can have while this attempt runs, as the owner's facts are the only ones
    /// with a subject the tail admits after its claim.
    public private(set) var priorSubject: CapSubject?
    /// ``subject`` and ``priorSubject``: what the store's overlay indexes this attempt's facts by.
    public var possibleSubjects: [CapSubject] { [subject] + (priorSubject.map { [$0] } ?? []) }
    public private(set) var stage: Stage = .deciding

    public enum Stage: Equatable, Sendable {
        /// Waiting for ``decide(now:state:inFlight:)``, first or again after a wait.
        case deciding
        /// The reservation is being written.
        case reserving(at: Int64)
        /// The reservation at `offset` is written; the tail must read past it.
        case readingBack(at: Int64, offset: Int64)
        /// Read back unfenced: the targets may be pushed until the send limit.
        case sending(reservedAt: Int64)
        /// Its outcome fact is being written.
        case recording
        /// Nothing more to do: decided without a send, fenced, or its outcome recorded.
        case finished
    }

    public init(
        notification: NotificationID, subject: CapSubject, targets: [String], caps: [CapRule], dedupWindow: Int64, policy: RulesPolicy,
        owner: String
    ) {
        self.notification = notification
        self.subject = subject
        self.targets = targets
        self.caps = caps
        self.dedupWindow = dedupWindow
        self.policy = policy
        self.owner = owner
    }

    /// When its facts stop mattering, written at `now`: the longest of its windows later.
    public func expiry(from now: Int64) -> Int64 { now &+ max(dedupWindow, caps.map(\.per).max() ?? 0) &+ policy.sendLimit }

    public enum Decision: Hashable, Sendable {
        /// Room: write this `reserved` fact, then ``reserved(at:)`` with its offset.
        case reserve(NotificationFact)
        /// Decide again when this resolves (``InFlightTable/wait(_:for:)``).
        case wait(InFlightTable.Wait)
        /// Every target's push was acknowledged within the dedup window: withheld as `duplicate`.
        case duplicate
        /// A cap is full: withheld as `cap`.
        case capped(key: CapKey, counted: Int)
        /// No targets (the stateless rules withheld every device). These facts settle attempts
        /// an earlier owner reserved and never resolved (it crashed between its reservation and
        /// its outcome): in doubt, since it may have sent, so they keep counting. Write them,
        /// then the event is done.
        case settle([NotificationFact])
    }

    /// Dedup, then each cap (design §6.1), against `state` and what is in flight here. A
    /// notification in flight here already waits for that one's outcome. On `.reserve`, the
    /// notification is begun in `inFlight`.
    public mutating func decide<State: RulesState>(
        now: Int64, state: State, inFlight: inout InFlightTable
    ) throws(State.Failure) -> Decision {
        precondition(stage == .deciding, "decide(now:state:inFlight:) once per wait")
        if inFlight.isInFlight(notification) { return .wait(.notification(notification)) }
        let known = try state.state(of: notification)
        priorSubject = known?.subject
        guard !targets.isEmpty else {
            stage = .finished
            let unresolved = known?.attempts.filter { $0.state.status == .reserved }.map(\.number) ?? []
            return .settle(unresolved.map { outcome(.inDoubt, attempt: $0, at: now) })
        }
        targets = RulesEvaluation.dedup(notification, targets: targets, now: now, window: dedupWindow, known: known).send
        guard !targets.isEmpty else {
            stage = .finished
            return .duplicate
        }
        var waitOn: Set<NotificationID> = []
        for cap in caps {
            switch try RulesEvaluation.cap(
                cap, notification: notification, subject: subject, now: now, state: state, inFlight: inFlight, policy: policy)
            {
            case .allow: continue
            case .wait(let on): waitOn.formUnion(on)
            case .withhold(let key, let counted):
                stage = .finished
                return .capped(key: key, counted: counted)
            }
        }
        guard waitOn.isEmpty else { return .wait(.anyOf(waitOn)) }
        attempt = (known?.attempt ?? 0) + 1
        _ = inFlight.begin(notification, keys: caps.flatMap { $0.keys(of: subject) })
        stage = .reserving(at: now)
        return .reserve(
            NotificationFact(
                notification: notification, status: .reserved, attempt: attempt, at: now, expires: expiry(from: now), owner: owner,
                subject: subject))
    }

    /// Its reservation was written at `offset` (Kafka acknowledged it).
    public mutating func reserved(at offset: Int64) {
        guard case .reserving(let at) = stage else { preconditionFailure("reserved(at:) without a reservation") }
        stage = .readingBack(at: at, offset: offset)
    }

    public enum ReadBack: Hashable, Sendable {
        /// The tail has not read past the reservation: ask again when it has.
        case notYet
        /// Push to ``targets`` now, while ``maySend(at:)``; then ``answered(_:deliveredBy:now:)``.
        case send
        /// Nothing to push any more (each target was acknowledged meanwhile, or the send limit
        /// passed): write this `released` fact, then ``recorded(in:)``.
        case release(NotificationFact)
        /// Another member claimed the partition after this owner did: never send. The owner
        /// stops (a zombie), or claims again if the group still assigns it the partition.
        case fenced(byClaimAt: Int64)
    }

    /// Whether the reservation may be sent, by `tail`, which has read the changelog up to its
    /// `next` offset into `state`. Dedup runs again on what the tail read meanwhile (an earlier
    /// owner's outcome).
    public mutating func readBack<State: RulesState>(_ tail: ChangelogTail, now: Int64, state: State) throws(State.Failure) -> ReadBack {
        guard case .readingBack(let at, let offset) = stage else { preconditionFailure("readBack without a written reservation") }
        switch tail.readBack(ofReservationAt: offset) {
        case .notYet: return .notYet
        case .fenced(let claim):
            stage = .finished
            return .fenced(byClaimAt: claim)
        case .clear:
            targets = try RulesEvaluation.dedup(notification, targets: targets, now: now, window: dedupWindow, state: state).send
            stage = .sending(reservedAt: at)
            guard !targets.isEmpty, maySend(at: now) else { return .release(answered([:], deliveredBy: now, now: now)) }
            return .send
        }
    }

    /// Whether a push (or a retry of one) may still go out at `now`: never later than the send
    /// limit after the reservation, which counts until then and no longer.
    public func maySend(at now: Int64) -> Bool {
        guard let sendDeadline else { return false }
        return now <= sendDeadline
    }

    /// The last instant a push may go out (``maySend(at:)``), once read back unfenced.
    public var sendDeadline: Int64? {
        guard case .sending(let reservedAt) = stage else { return nil }
        return reservedAt &+ policy.sendLimit
    }

    /// The outcome fact for FCM's `answers` (a target without one was not pushed): `sent` with
    /// the acknowledged pushes if any, else `in_doubt` if any may have been delivered, else
    /// `released`. `deliveredBy` is when an acknowledged push last may have reached its device
    /// (the acknowledgement's time), `now` when the outcome is known. Write it, then
    /// ``recorded(in:)``.
    public mutating func answered(_ answers: [String: PushAnswer], deliveredBy: Int64, now: Int64) -> NotificationFact {
        guard case .sending = stage else { preconditionFailure("answered without a send") }
        stage = .recording
        let acknowledged = targets.filter { answers[$0] == .accepted }
        guard acknowledged.isEmpty else {
            let pushes = acknowledged.map { DevicePushID(notification: notification, target: $0) }
            return NotificationFact(
                notification: notification, status: .sent, attempt: attempt, at: deliveredBy, expires: expiry(from: now), owner: owner,
                devices: pushes)
        }
        return outcome(answers.values.contains(.unknown) ? .inDoubt : .released, attempt: attempt, at: now)
    }

    /// Its outcome fact was written: it is no longer in flight. Returns the waiters to decide
    /// again (``InFlightTable/finish(_:)``).
    public mutating func recorded(in inFlight: inout InFlightTable) -> [InFlightTable.Waiter] {
        guard stage == .recording else { preconditionFailure("recorded(in:) without an outcome") }
        stage = .finished
        return inFlight.finish(notification)
    }

    private func outcome(_ status: FactStatus, attempt: UInt32, at: Int64) -> NotificationFact {
        NotificationFact(notification: notification, status: status, attempt: attempt, at: at, expires: expiry(from: at), owner: owner)
    }
}
