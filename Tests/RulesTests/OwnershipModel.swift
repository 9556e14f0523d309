import Rules

/// What FCM does with one device push in the model.
enum FCMAnswer: Hashable {
    /// Delivered and acknowledged.
    case accepted
    /// Delivered, but the answer was lost (a 503 after delivering): the owner is in doubt.
    case lostAnswer
    /// Definitively refused: not delivered.
    case refused

    /// What the owner learns of it.
    var pushAnswer: PushAnswer {
        switch self {
        case .accepted: .accepted
        case .lostAnswer: .unknown
        case .refused: .refused
        }
    }
}

extension ChangelogTail {
    /// This tail as one that never read a foreign claim: its read-backs are never fenced (the
    /// model's self-test of a protocol without fencing).
    var blind: ChangelogTail {
        var tail = ChangelogTail(owner: owner)
        if let claim {
            _ = tail.read(.claim(Claim(at: 0, owner: owner, partitionCount: 1)), at: claim)
            if next > claim + 1 { tail.skip(next - 1) }
        }
        return tail
    }
}

/// The ownership model of design §5.4–§5.5 and §8.1: one state partition, its changelog (a
/// shared log of encoded facts), the by-subject records one subject's events arrive on, and
/// members that own the partition in turn. Every step of an owner is one choice point, as are
/// crashes (the owner stops between any two steps), rebalances (the old owner runs on as a
/// zombie for `zombieSteps` steps), and FCM's answers. The owners use the real ``FactCodec``,
/// ``InMemoryRulesState`` and ``RulesEvaluation``; the model records what FCM truly delivered,
/// and checks the invariants against it.
struct OwnershipModel<C: Chooser> {
    struct Config {
        /// Event IDs on the partition in order; a repeated ID is a producer duplicate or a replay.
        var events: [String]
        var devices = ["fid:a"]
        var cap = CapRule(max: 2, per: 1_000, by: [.user])
        var dedupWindow: Int64 = 1_000
        var policy = RulesPolicy(sendLimit: 4)
        var crashes = 1
        var rebalances = 1
        var zombieSteps = 3
        var answers: [FCMAnswer] = [.accepted, .lostAnswer, .refused]
        var maxSteps = 400
        /// Off only to show the model catches a broken protocol: owners then send without
        /// checking for a foreign claim at the read-back.
        var fencing = true
    }

    struct Delivery {
        var notification: NotificationID
        var target: String
        var time: Int64
        var answer: FCMAnswer
        /// The log offset of the `sent` fact that lists it, once written.
        var recordedAt: Int?
    }

    /// One event's notification in an owner's hands: the production ``NotificationAttempt``,
    /// with what the model records about its delivery.
    struct Work {
        var attempt: NotificationAttempt
        var inFlight = InFlightTable()
        var sentAt: Int64 = 0
        /// The log prefix the owner had read when it last checked dedup (at the read-back).
        var view = 0
        var deliveries: [Int] = []
    }

    enum Phase {
        case claim, evaluate, commit
        case reserve(Work, NotificationFact)
        case readBack(Work)
        case send(Work)
        case record(Work, NotificationFact)
    }

    struct Member {
        let id: String
        /// Its tail of the changelog (the production ``ChangelogTail``): its claim, what its
        /// state takes, its fencing check. Each claim has an owner ID of its own (`id#n`).
        var tail: ChangelogTail
        var claims = 0
        var applied: Int { Int(tail.next) }
        var state = InMemoryRulesState()
        var next = 0
        var phase = Phase.claim
        /// Steps a zombie still takes before it learns of its eviction; nil for the owner.
        var stepsLeft: Int?
        var stopped = false

        init(id: String) {
            self.id = id
            tail = ChangelogTail(owner: "\(id)#0")
        }
    }

    let config: Config
    var chooser: C
    var log: [[UInt8]] = []
    var committed = 0
    var now: Int64 = 0
    var members: [Member] = []
    var owner = 0
    var deliveries: [Delivery] = []
    var crashesLeft: Int
    var rebalancesLeft: Int
    var stats = ModelStats()

    init(_ config: Config, chooser: C) {
        self.config = config
        self.chooser = chooser
        crashesLeft = config.crashes
        rebalancesLeft = config.rebalances
        members = [Member(id: "m0:1")]
    }

    /// Runs to the end: every event done by the owner and no zombie left with steps.
    mutating func run() {
        while stats.steps < config.maxSteps {
            let runnable = members.indices.filter(canStep)
            guard !runnable.isEmpty else { break }
            let ownerBusy = runnable.contains(owner)
            let crash = ownerBusy && crashesLeft > 0
            let rebalance = ownerBusy && rebalancesLeft > 0
            let pick = chooser.choose(runnable.count + (crash ? 1 : 0) + (rebalance ? 1 : 0))
            now += 1
            stats.steps += 1
            if pick < runnable.count {
                step(runnable[pick])
            } else if crash && pick == runnable.count {
                crashesLeft -= 1
                members[owner].stopped = true
                handOver()
            } else {
                rebalancesLeft -= 1
                members[owner].stepsLeft = config.zombieSteps
                handOver()
            }
        }
        if committed < config.events.count && stats.steps < config.maxSteps {
            stats.violations.append("events left undone: committed \(committed) of \(config.events.count)")
        }
        stats.truncated += stats.steps >= config.maxSteps ? 1 : 0
        checkWindows()
    }

    private mutating func handOver() {
        members.append(Member(id: "m\(members.count):\(members.count + 1)"))
        owner = members.count - 1
    }

    private func canStep(_ i: Int) -> Bool {
        let m = members[i]
        if m.stopped || (i != owner && (m.stepsLeft ?? 0) <= 0) { return false }
        if case .evaluate = m.phase { return m.next < config.events.count }
        return true
    }

    private mutating func step(_ i: Int) {
        if i != owner {
            members[i].stepsLeft! -= 1
            if members[i].stepsLeft == 0 { members[i].stopped = true }
        }
        catchUp(i)
        var m = members[i]
        switch m.phase {
        case .claim:
            // Restore from the start: a re-claim after being fenced must see the foreign
            // reservations its tail left out after its old claim (the late claimer's sends).
            m.state = InMemoryRulesState()
            m.claims += 1
            m.tail.reclaim(as: "\(m.id)#\(m.claims)")
            _ = append(.claim(Claim(at: now, owner: m.tail.owner, partitionCount: 1)))
            members[i] = m
            catchUp(i)
            m = members[i]
            m.next = committed
            m.phase = .evaluate
        case .evaluate:
            m.phase = evaluate(m)
        case .reserve(var w, let fact):
            w.attempt.reserved(at: Int64(append(.notification(fact))))
            m.phase = .readBack(w)
        case .readBack(var w):
            // With fencing off (the model's self-test), the read-back asks a tail that never saw
            // a foreign claim.
            let readBack = w.attempt.readBack(config.fencing ? m.tail : m.tail.blind, now: now, state: m.state)
            w.view = m.applied
            switch readBack {
            case .notYet:
                stats.violations.append("a reservation not read back after a catch-up, at step \(now)")
                m.phase = .commit
            case .fenced:
                stats.fenced += 1
                // A zombie stops. The owner the group assigns the partition to was fenced by a
                // zombie's late claim: it claims again and restores (its events are re-read).
                if i == owner { m.phase = .claim } else { m.stopped = true }
            case .release(let fact): m.phase = .record(w, fact)
            case .send: m.phase = .send(w)
            }
        case .send(var w):
            var answers: [String: PushAnswer] = [:]
            if w.attempt.maySend(at: now) {
                w.sentAt = now
                for target in w.attempt.targets {
                    let answer = config.answers[chooser.choose(config.answers.count)]
                    answers[target] = answer.pushAnswer
                    if answer != .refused { w.deliveries.append(deliver(w.attempt.notification, target, answer, view: w.view)) }
                }
            }
            let outcome = w.attempt.answered(answers, deliveredBy: w.sentAt, now: now)
            m.phase = .record(w, outcome)
        case .record(var w, let fact):
            let offset = append(.notification(fact))
            for d in w.deliveries where deliveries[d].answer == .accepted { deliveries[d].recordedAt = offset }
            stats.inDoubt += fact.status == .inDoubt ? 1 : 0
            _ = w.attempt.recorded(in: &w.inFlight)
            m.phase = .commit
        case .commit:
            if i == owner { committed = max(committed, m.next + 1) }
            m.next += 1
            m.phase = .evaluate
        }
        members[i] = m
    }

    /// Dedup, then the cap (design §6.1), for the event at `m.next`: the production
    /// ``NotificationAttempt`` decides.
    private mutating func evaluate(_ m: Member) -> Phase {
        let n = NotificationID(eventID: config.events[m.next], mapping: "chat.message", subject: "u1")
        let subject = CapSubject(user: "u1", category: "social", mapping: "chat.message", devices: config.devices.map { DeviceKey(target: $0) })
        var work = Work(
            attempt: NotificationAttempt(
                notification: n, subject: subject, targets: config.devices, caps: [config.cap], dedupWindow: config.dedupWindow,
                policy: config.policy, owner: m.tail.owner))
        switch work.attempt.decide(now: now, state: m.state, inFlight: &work.inFlight) {
        case .duplicate:
            stats.withheldDuplicate += 1
            return .commit
        case .capped:
            stats.withheldCap += 1
            checkWithheld(n, view: m.state)
            return .commit
        case .wait, .settle:
            stats.violations.append("a wait with nothing in flight, or no targets, at step \(now)")
            return .commit
        case .reserve(let fact):
            return .reserve(work, fact)
        }
    }

    private mutating func append(_ fact: Fact) -> Int {
        log.append(FactCodec.encode(fact))
        return log.count - 1
    }

    /// The member's tail: applies what its ``ChangelogTail`` admits (every fact but a foreign
    /// reservation after its own claim, never acted upon: its writer is fenced).
    private mutating func catchUp(_ i: Int) {
        while members[i].applied < log.count {
            let offset = members[i].applied
            do {
                let fact = try FactCodec.decode(log[offset])
                if members[i].tail.read(fact, at: Int64(offset)) == .apply { members[i].state.apply(fact) }
            } catch {
                stats.violations.append("fact at \(offset) does not decode: \(error)")
                members[i].tail.skip(Int64(offset))
            }
        }
    }
}

/// What the runs did and found.
struct ModelStats: Sendable {
    var runs = 0
    var steps = 0
    var deliveries = 0
    var withheldCap = 0
    var withheldDuplicate = 0
    var fenced = 0
    var inDoubt = 0
    /// Same device push delivered again because its acknowledgement was not recorded yet (the
    /// step-5 window: a crash or a zombie between FCM's answer and the outcome fact).
    var duplicatesInWindow = 0
    /// Same device push delivered again after an answer lost in flight.
    var duplicatesAfterLostAnswer = 0
    /// Runs cut at `maxSteps`.
    var truncated = 0
    /// The most distinct notifications delivered in one window (shows the cap was reached).
    var maxInWindow = 0
    var violations: [String] = []

    mutating func add(_ other: ModelStats) {
        runs += 1
        steps += other.steps
        deliveries += other.deliveries
        withheldCap += other.withheldCap
        withheldDuplicate += other.withheldDuplicate
        fenced += other.fenced
        inDoubt += other.inDoubt
        duplicatesInWindow += other.duplicatesInWindow
        duplicatesAfterLostAnswer += other.duplicatesAfterLostAnswer
        truncated += other.truncated
        maxInWindow = max(maxInWindow, other.maxInWindow)
        violations += other.violations
    }
}
