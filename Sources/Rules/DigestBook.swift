/// The digest windows of one state partition (issue 56 design §4.3), as its owner keeps them in
/// memory: built from the partition's changelog on restore and from the owner's own facts as
/// Kafka acknowledges them. Pure.
///
/// Facts merge as a lattice: a window's members are a union keyed by event ID, its close is
/// kept once seen, so any order of a set of facts with any duplicates gives the same book. The
/// owner asks ``decide(key:eventID:at:window:)`` for each event of a digest mapping, closes what
/// ``due(at:)`` lists when its end comes, and renders the push from ``closing(_:hold:)``.
public struct DigestBook: Sendable {
    public struct Window: Sendable, Equatable {
        public var id: NotificationID
        public var key: String
        public var mapping: String
        public var opened: Int64
        public var end: Int64
        /// By event ID.
        public var members: [String: DigestMember]
        /// The members accounted for when it closed; nil while open.
        public var closedWith: Set<String>?

        /// Members in the order they joined (by time, then event ID).
        public var ordered: [DigestMember] { members.values.sorted { ($0.at, $0.eventID) < ($1.at, $1.eventID) } }
    }

    public private(set) var windows: [NotificationID: Window] = [:]
    /// Per key, its windows (few: one open, the closed ones not yet forgotten).
    private var byKey: [String: [NotificationID]] = [:]

    public init() {}

    /// Merges `fact`: true when it opened a window or closed an open one (the earliest end of
    /// the open windows may have moved), false when it only added to what was known.
    @discardableResult
    public mutating func apply(_ fact: DigestFact) -> Bool {
        var moved = false
        switch fact {
        case .member(let m):
            if windows[m.window] == nil {
                moved = true
                windows[m.window] = Window(id: m.window, key: m.key, mapping: m.mapping, opened: m.opened, end: m.end, members: [:])
                byKey[m.key, default: []].append(m.window)
            }
            // One event written twice (two owners, one fenced): the earlier copy, sent at once if either was.
            var merged = m
            if let known = windows[m.window]!.members[m.eventID] {
                if (known.at, known.owner) < (m.at, m.owner) { merged = known }
                merged.sentAtOnce = known.sentAtOnce || m.sentAtOnce
            }
            windows[m.window]!.members[m.eventID] = merged
        case .closed(let c):
            // A close read before the window's members (a restore in another order) waits for them.
            guard windows[c.window] != nil else {
                pendingCloses[c.window, default: []].formUnion(c.members)
                return false
            }
            moved = windows[c.window]!.closedWith == nil
            windows[c.window]!.closedWith = (windows[c.window]!.closedWith ?? []).union(c.members)
        }
        if let early = pendingCloses.removeValue(forKey: fact.window) {
            windows[fact.window]!.closedWith = (windows[fact.window]!.closedWith ?? []).union(early)
        }
        return moved
    }

    /// Closes read before any member of their window.
    private var pendingCloses: [NotificationID: Set<String>] = [:]

    /// What to do with an event of `key` at `at` (ms).
    public enum Decision: Sendable, Equatable {
        /// It joins this open window.
        case join(NotificationID, end: Int64)
        /// It opens a new window (the first event of its key, or the first after the last closed).
        case open(NotificationID, end: Int64)
        /// It is a member already (read again): nothing to write.
        case duplicate
    }

    /// - Parameters:
    ///   - window: the window's length (ms), for a new one.
    ///   - closing: windows whose close has begun: no event joins them any more.
    public func decide(
        key: String, mapping: String, eventID: String, at: Int64, window: Int64, closing: Set<NotificationID> = []
    ) -> Decision {
        for id in byKey[key] ?? [] {
            guard let w = windows[id], w.mapping == mapping else { continue }
            // Already a member: of an open window (it will be counted), or accounted for at a close.
            if w.members[eventID] != nil, w.closedWith == nil || w.closedWith!.contains(eventID) { return .duplicate }
        }
        if let open = openWindow(key: key, mapping: mapping), at < open.end, !closing.contains(open.id) { return .join(open.id, end: open.end) }
        return .open(NotificationID(digestKey: key, mapping: mapping, opened: at), end: at + window)
    }

    /// The key's open window: the latest opened that is not closed.
    public func openWindow(key: String, mapping: String) -> Window? {
        (byKey[key] ?? []).compactMap { windows[$0] }.filter { $0.mapping == mapping && $0.closedWith == nil }.max { $0.opened < $1.opened }
    }

    /// Open windows whose end is not after `at`, soonest first.
    public func due(at: Int64) -> [Window] {
        windows.values.filter { $0.closedWith == nil && $0.end <= at }.sorted { ($0.end, $0.id) < ($1.end, $1.id) }
    }

    /// The earliest end of an open window, but those in `excluding` (their close has begun).
    public func nextEnd(excluding: Set<NotificationID> = []) -> Int64? {
        windows.values.lazy.filter { $0.closedWith == nil && !excluding.contains($0.id) }.map(\.end).min()
    }

    /// What a window's close sends: nothing, its one counted event as the mapping sends it, or
    /// `many` from its last counted event with what the window gathered.
    public enum Closing: Sendable, Equatable {
        case nothing
        case single(DigestMember)
        case many(last: DigestMember, count: Int, firstActor: String?, lastActor: String?, distinctActors: Int)
    }

    /// The events counted are the window's members but one sent at once (`first: now`).
    public func closing(_ window: Window) -> Closing {
        let counted = window.ordered.filter { !$0.sentAtOnce }
        guard let last = counted.last else { return .nothing }
        if counted.count == 1 { return .single(last) }
        let actors = counted.compactMap(\.actor)
        return .many(
            last: last, count: counted.count, firstActor: actors.first, lastActor: actors.last, distinctActors: Set(actors).count)
    }

    /// Takes back a member whose fact could not be written (its event is read again): the owner's
    /// own, before Kafka had it, so no other member can have read it.
    public mutating func retract(window id: NotificationID, eventID: String) {
        guard var w = windows[id] else { return }
        w.members[eventID] = nil
        if w.members.isEmpty, w.closedWith == nil {
            windows[id] = nil
            byKey[w.key]?.removeAll { $0 == id }
        } else {
            windows[id] = w
        }
    }

    /// Forgets closed windows that ended before `before` (their events are past any re-read the
    /// changelog's and the source's retention allow).
    public mutating func forget(endedBefore before: Int64) {
        let gone = windows.values.filter { $0.closedWith != nil && $0.end < before }.map(\.id)
        for id in gone {
            guard let w = windows.removeValue(forKey: id) else { continue }
            byKey[w.key]?.removeAll { $0 == id }
            if byKey[w.key]?.isEmpty == true { byKey[w.key] = nil }
        }
    }
}
