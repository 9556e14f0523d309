import Dates
import Rules
import Synchronization
import Threading

/// The digest windows of one state partition, in memory (``DigestBook``; issue 56 design §4.3):
/// filled by the changelog's follower and by the owner's own facts, read by its decisions and
/// its close loop.
final class DigestShelf: Sendable {
    private struct State {
        var book = DigestBook()
        /// Windows whose close has begun: no event joins them any more.
        var closing: Set<NotificationID> = []
    }

    private let state = Mutex(State())
    /// Notified when a window opens or closes: the close loop's next end may have moved. Not for
    /// a member joining a known window (the owner's own facts read back are most of those).
    let changed = ChangeSignal()

    func reset() {
        state.withLock { $0 = State() }
        changed.notify()
    }

    /// The digest facts among facts the changelog's follower admitted.
    func apply(_ facts: [(offset: Int64, fact: Fact)]) {
        var moved = false
        state.withLock { s in
            for case (_, .digest(let fact)) in facts where s.book.apply(fact) { moved = true }
        }
        if moved { changed.notify() }
    }

    /// Decides an event and, unless it is a duplicate, counts its member at once (before Kafka
    /// has it), so an event of the same key decided next joins the same window.
    func decide(_ request: DigestRequest, owner: String) -> (DigestBook.Decision, DigestMember?) {
        let (decision, member) = state.withLock { s -> (DigestBook.Decision, DigestMember?) in
            let decision = s.book.decide(
                key: request.key, mapping: request.mapping, eventID: request.eventID, at: request.at, window: request.window,
                closing: s.closing)
            let member: DigestMember
            switch decision {
            case .duplicate: return (decision, nil)
            case .open(let id, let end):
                member = request.member(window: id, opened: request.at, end: end, sentAtOnce: request.sendFirst, owner: owner)
            case .join(let id, let end):
                member = request.member(window: id, opened: s.book.windows[id]?.opened ?? request.at, end: end, sentAtOnce: false, owner: owner)
            }
            s.book.apply(.member(member))
            return (decision, member)
        }
        if case .open = decision { changed.notify() }
        return (decision, member)
    }

    func retract(_ member: DigestMember) {
        state.withLock { $0.book.retract(window: member.window, eventID: member.eventID) }
        changed.notify()
    }

    /// The windows due at `now`, each marked as closing, with what its close sends.
    func beginClosing(at now: Int64) -> [(window: DigestBook.Window, closing: DigestBook.Closing)] {
        state.withLock { s in
            s.book.due(at: now).filter { !s.closing.contains($0.id) }.map { w in
                s.closing.insert(w.id)
                return (s.book.windows[w.id]!, s.book.closing(s.book.windows[w.id]!))
            }
        }
    }

    /// A close that could not be finished: the window may be closed again.
    func abandonClosing(_ id: NotificationID) {
        state.withLock { _ = $0.closing.remove(id) }
    }

    func closed(_ fact: DigestClosed) {
        state.withLock { s in
            s.book.apply(.closed(fact))
            s.closing.remove(fact.window)
            s.book.forget(endedBefore: fact.at - 86_400_000)
        }
        changed.notify()
    }

    /// The earliest end of an open window whose close has not begun.
    var nextEnd: Int64? { state.withLock { $0.book.nextEnd(excluding: $0.closing) } }
}

/// An event of a digest mapping, as its state partition's owner takes it.
public struct DigestRequest: Sendable {
    public var key: String
    public var mapping: String
    public var eventID: String
    /// When it was read (ms since 1970): a window opened by it ends `window` later.
    public var at: Int64
    /// The window's length (ms).
    public var window: Int64
    public var actor: String?
    /// `first: now`: an event that opens a window is sent at once.
    public var sendFirst: Bool
    public var event: DigestEvent

    public init(
        key: String, mapping: String, eventID: String, at: Int64, window: Int64, actor: String?, sendFirst: Bool, event: DigestEvent
    ) {
        (self.key, self.mapping, self.eventID, self.at, self.window) = (key, mapping, eventID, at, window)
        (self.actor, self.sendFirst, self.event) = (actor, sendFirst, event)
    }

    func member(window: NotificationID, opened: Int64, end: Int64, sentAtOnce: Bool, owner: String) -> DigestMember {
        DigestMember(
            window: window, key: key, mapping: mapping, opened: opened, end: end, eventID: eventID, at: at, actor: actor,
            sentAtOnce: sentAtOnce, event: event, owner: owner)
    }
}

/// How an event of a digest mapping ended at its owner.
public enum DigestJoin: Sendable, Equatable {
    /// It joined a window (or opened one), which ends at `end` (ms): its member fact is written.
    case joined(end: Int64)
    /// It opened a window with `first: now` and was sent at once.
    case sentFirst(end: Int64)
    /// It is a member already.
    case duplicate
}

/// Sends a window's push at its end: true once done (sent, or nothing to send), false to try
/// again later.
public typealias DigestCloser = @Sendable (_ window: DigestBook.Window, _ closing: DigestBook.Closing, _ partition: Int32) async -> Bool

extension StatePartitionOwner {
    /// Takes an event of a digest mapping: a member of its key's open window, or the first of a
    /// new one (sent at once by `sendFirst` with `first: now`; nil from it: not done). Throws
    /// what Kafka throws writing the member; the event is not done then, and its member is taken back.
    public func digest(_ request: DigestRequest, sendFirst: @Sendable () async -> Bool) async throws -> DigestJoin? {
        let (decision, member) = digests.decide(request, owner: owner)
        guard let member else { return .duplicate }
        var sent = false
        if case .open = decision, request.sendFirst {
            guard await sendFirst() else {
                digests.retract(member)
                return nil
            }
            sent = true
        }
        do {
            _ = try await changelog.write(digest: .member(member))
        } catch {
            digests.retract(member)
            throw error
        }
        return sent ? .sentFirst(end: member.end) : .joined(end: member.end)
    }

    /// Closes each window at its end, until cancelled: one deadline, no polling. A close that
    /// fails is tried again a second later.
    func closeLoop(_ closer: @escaping DigestCloser, wall: any WallClock) async {
        while !Task.isCancelled {
            var failed = false
            for (window, closing) in digests.beginClosing(at: wall.nowMilliseconds()) {
                if await !close(window, closing, closer, wall: wall) { failed = true }
            }
            if failed {
                try? await Task.sleep(for: .seconds(1))
                continue
            }
            let next = digests.nextEnd
            let deadline = next.map { ContinuousClock.now + wall.realDuration(untilMilliseconds: $0) }
            _ = await digests.changed.wait(until: deadline) { digests.nextEnd != next }
        }
    }

    private func close(_ window: DigestBook.Window, _ closing: DigestBook.Closing, _ closer: DigestCloser, wall: any WallClock) async -> Bool {
        guard await closer(window, closing, changelog.configuration.partition) else {
            digests.abandonClosing(window.id)
            return false
        }
        let fact = DigestClosed(window: window.id, at: wall.nowMilliseconds(), members: Array(window.members.keys), owner: owner)
        do {
            _ = try await changelog.write(digest: .closed(fact))
        } catch {
            digests.abandonClosing(window.id)
            return false
        }
        digests.closed(fact)
        return true
    }
}
