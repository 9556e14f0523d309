/// One state partition's changelog as its owner reads it (docs/rules-state.md, design §5.4):
/// which facts its state takes, where its own claim is, and whether a reservation it wrote may
/// be sent. Pure: offsets and facts in, decisions out; the owner's Kafka tail feeds it in offset
/// order and applies what it admits to its ``RulesState`` store.
///
/// - **The claim.** A new owner writes a claim (``Claim``, its owner ID unique per member,
///   generation and nonce) and restores everything up to it. The tail finds it by its owner.
/// - **What the state takes.** Every fact, except a *foreign* reservation after the owner's own
///   claim: its writer was fenced at its read-back and never sends (so it must not count).
/// - **Fencing.** A reservation of the owner's may be sent once the tail has read past it and no
///   foreign claim lies between the owner's claim and it. Otherwise another member claimed the
///   partition meanwhile: a zombie stops; the member the group assigns the partition to claims
///   again (``reclaim()``).
/// - **A re-claim restores from the start**, with the new claim as the filter point: the
///   reservations a late claimer made between the two claims were legitimate (it was not fenced)
///   and were sent, so they count (found by the ownership model, `Tests/RulesTests`). So each
///   claim has an owner ID of its own (a new nonce): read from the start, the member's earlier
///   claim is a foreign one before its current claim, and does not filter.
public struct ChangelogTail: Sendable, Equatable {
    /// This member's owner ID for its current claim, as its facts and claim carry it.
    public private(set) var owner: String
    /// The offset of this member's current claim, once the tail has read it.
    public private(set) var claim: Int64?
    /// The next offset to read.
    public private(set) var next: Int64 = 0
    /// Foreign claims read after this member's claim, in offset order: where, and when each
    /// was made (its `at`).
    private var foreignClaims: [ForeignClaim] = []
    /// When this member's claim was made (its `at`), once read.
    public private(set) var claimedAt: Int64?

    private struct ForeignClaim: Sendable, Equatable {
        var offset: Int64
        var at: Int64
    }

    public init(owner: String) {
        self.owner = owner
    }

    /// What to do with the fact at `offset`.
    public enum Admission: Equatable, Sendable {
        /// Merge it into the state.
        case apply
        /// Leave it out: a foreign reservation after this member's claim.
        case leaveOut
        /// A claim: nothing to merge (claims are not notification state).
        case claim(ours: Bool)
    }

    /// Reads the fact at `offset` (offsets only grow; a fact read again after a restart of the
    /// tail at an earlier offset is read as new).
    public mutating func read(_ fact: Fact, at offset: Int64) -> Admission {
        next = offset + 1
        switch fact {
        case .claim(let c) where c.owner == owner:
            claim = offset
            claimedAt = c.at
            foreignClaims.removeAll()
            return .claim(ours: true)
        case .claim(let c):
            if claim != nil { foreignClaims.append(ForeignClaim(offset: offset, at: c.at)) }
            return .claim(ours: false)
        case .notification(let f):
            if let claim, offset > claim, f.status == .reserved, f.owner != owner { return .leaveOut }
            return .apply
        case .digest:
            // A window's facts merge whoever wrote them (``DigestBook``): a member a fenced owner
            // wrote is still an event that joined.
            return .apply
        }
    }

    /// Reads past the record at `offset` that is not a fact (it does not decode: the caller
    /// logs and counts it); nothing is merged.
    public mutating func skip(_ offset: Int64) {
        next = offset + 1
    }

    /// True once the tail has read this member's claim: everything before it is restored.
    public var restored: Bool { claim != nil }

    /// Whether this member's reservation at `offset` may be sent.
    public enum ReadBack: Equatable, Sendable {
        /// The tail has not read past it yet: wait.
        case notYet
        /// No foreign claim between this member's claim and it: send.
        case clear
        /// Another member claimed the partition after this member did: do not send.
        case fenced(byClaimAt: Int64)
    }

    public func readBack(ofReservationAt offset: Int64) -> ReadBack {
        guard let claim, next > offset else { return .notYet }
        if let foreign = foreignClaims.first(where: { $0.offset > claim && $0.offset < offset }) { return .fenced(byClaimAt: foreign.offset) }
        return .clear
    }

    /// Whether the foreign claim at `offset` (one that fenced this member) was made before this
    /// member's own and written after it: a member that held the partition earlier, whose claim
    /// came late. Such a claim does not mean another member holds the partition now, so the
    /// member the group assigns it to claims again; a claim made later does (this member is
    /// then the one left behind, and stops). Claim times are the members' clocks: a hint for
    /// liveness, while fencing alone keeps the counts exact.
    public func isLateClaim(atOffset offset: Int64) -> Bool {
        guard let mine = claimedAt, let theirs = foreignClaims.first(where: { $0.offset == offset }) else { return false }
        return theirs.at < mine
    }

    /// Fenced while the group still assigns this member the partition: forget the claim and read
    /// from the start as `owner`, a new owner ID (a new nonce); the caller writes a new claim
    /// under it and restores its state from nothing.
    public mutating func reclaim(as owner: String) {
        precondition(owner != self.owner, "a new claim needs an owner ID of its own")
        self.owner = owner
        claim = nil
        claimedAt = nil
        next = 0
        foreignClaims.removeAll()
    }
}
