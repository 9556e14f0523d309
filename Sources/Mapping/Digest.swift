import JSON

/// `digest:` (docs/mapping.md, *Digests*; issue 56 design §4): a user's events of one key within
/// a window become one push, "Bob and 4 others commented", instead of five.
///
/// ```yaml
/// comment.created:
///   target: {user: {field: /post/author_id}}
///   digest: {window: 10m, by: [user, {field: /post/id}], first: now, actors: {field: /actor/name}}
///   body: {key: comment_body, args: [{field: /actor/name}]}             # one event
///   many:                                                               # two or more
///     body: {key: comment_digest_body, args: [{digest: count}, {digest: first_actor}]}
/// ```
///
/// The first event of a key opens a window of `window`; later ones join it. At its end one push
/// goes out: the mapping's own keys for a single event, `many`'s (merged over them, as a
/// variant's are) for two or more, with the ``DigestValue``s as args. Android's loc keys cannot
/// be plurals (the FCM SDK looks them up as `<string>`), so the count chooses between two keys,
/// and `lint` checks both. Pure.
public struct Digest: Sendable, Equatable {
    /// `first: now` sends the window's first event at once and digests the rest; `hold` (the
    /// default) holds them all until the window ends.
    public enum First: String, Sendable, Equatable, CaseIterable {
        case hold, now
    }

    /// How long a window stays open after its first event (10 s … 24 h).
    public var windowSeconds: Int
    /// After the user: event fields whose values, with the user's, make the key (one window per
    /// user and post, say). Empty: one window per user.
    public var by: [JSONPointer]
    public var first: First
    /// The field naming an event's actor (`Bob`): the first and last are kept, distinct ones
    /// counted, for ``DigestValue/firstActor``, ``DigestValue/lastActor`` and ``DigestValue/others``.
    public var actors: JSONPointer?
    /// The mapping sent for two events or more: `many:` merged over the mapping's own keys.
    public var many: EventMapping { manyMapping[0] }
    /// One element (a struct cannot hold its own type directly).
    var manyMapping: [EventMapping]

    public static let windowRange = 10...86_400

    /// The same rule: window, key, first and actors, and `many` from the same place.
    public static func == (a: Digest, b: Digest) -> Bool {
        (a.windowSeconds, a.by, a.first, a.actors) == (b.windowSeconds, b.by, b.first, b.actors)
            && (a.many.file, a.many.line) == (b.many.file, b.many.line)
    }

    /// How long the rules remember a window's close after it ends (ms): a re-read event or a
    /// close redone after a crash is a duplicate within it.
    public var dedupSeconds: Int { windowSeconds + 3_600 }

    /// The actor's name in an event whose data is `data`, if `actors` names a field it has.
    public func actor(in data: JSONValue) -> String? {
        actors.flatMap { $0.resolve(in: data) }.flatMap(Stringify.scalar)
    }

    public init(windowSeconds: Int, by: [JSONPointer] = [], first: First = .hold, actors: JSONPointer? = nil, many: EventMapping) {
        (self.windowSeconds, self.by, self.first, self.actors, manyMapping) = (windowSeconds, by, first, actors, [many])
    }

    /// The window's key for an event of `user` whose data is `data`: the user and each `by`
    /// field's value as the stringification rule writes it (missing or null: empty), separated
    /// by U+001F, which no JSON scalar's text the rule writes can hold unescaped.
    public func key(user: String, data: JSONValue) -> String {
        var key = user
        for pointer in by {
            key.append("\u{1F}")
            key += (pointer.resolve(in: data)).flatMap(Stringify.scalar) ?? ""
        }
        return key
    }

    /// `10m window per user and /post/id, the first sent at once`: what `validate` prints.
    public var summary: String {
        var text = "digested: one push per \(EventAge.text(seconds: Int64(windowSeconds))) window per user"
        if !by.isEmpty { text += " and " + by.map(\.description).joined(separator: ", ") }
        if first == .now { text += ", the first sent at once" }
        return text
    }
}

/// What a `{digest: …}` arg says (strings, like every arg).
public enum DigestValue: String, Sendable, Equatable, CaseIterable {
    /// The events digested: all of the window's, or with `first: now` those after the one sent at once.
    case count
    /// The distinct actors but the first (with `actors`), else the count less one: "and 4 others".
    case others
    case firstActor = "first_actor"
    case lastActor = "last_actor"
}

/// What a digest window gathered, as its push is rendered.
public struct DigestSummary: Sendable, Equatable {
    public var count: Int
    public var firstActor: String?
    public var lastActor: String?
    /// Distinct actors among the events counted; nil without `actors`.
    public var distinctActors: Int?

    public init(count: Int, firstActor: String? = nil, lastActor: String? = nil, distinctActors: Int? = nil) {
        (self.count, self.firstActor, self.lastActor, self.distinctActors) = (count, firstActor, lastActor, distinctActors)
    }

    /// The arg's text: a number in decimal, an actor's name, or empty without actors.
    public func text(_ value: DigestValue) -> String {
        switch value {
        case .count: String(count)
        case .others: String(max(0, (distinctActors ?? count) - 1))
        case .firstActor: firstActor ?? ""
        case .lastActor: lastActor ?? ""
        }
    }
}

extension EventMapping {
    /// What `digest` does for this event type, for `pushbridge validate`: `comment.created:
    /// digested: one push per 10m window per user and /post/id, the first sent at once; two or
    /// more send many's keys`.
    public var digestSummary: String? {
        digest.map { "\(eventType): \($0.summary); two or more send many's keys" }
    }
}
