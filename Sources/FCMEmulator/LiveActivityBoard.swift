import JSON

/// What a phone's Live Activities would show after the accepted messages, in the order FCM
/// accepted them: the device model tests read (`GET /admin/live-activities`). Pure.
///
/// The rules are Apple's: an update or end whose `timestamp` is older than the state shown is
/// ignored (`Activity.update(_:alertConfiguration:timestamp:)`: "If this is older than a
/// previous update or push payload, the system ignores this update"; the same on `end`); an
/// activity that ended ignores later updates ("The system ignores updates to a Live Activity
/// that's in the ended state"). An equal timestamp is applied: Apple says "older than" only.
/// Activities are keyed by their Apple token, as APNs routes them; a start is keyed by the
/// push-to-start token it was sent to and shown as started.
public struct LiveActivityBoard: Sendable, Equatable {
    public struct Activity: Sendable, Equatable {
        /// `start`, `update` or `end`: the last event applied.
        public var event: String
        public var timestamp: Int64
        public var contentState: JSONValue?
        /// Pushes that reached the activity and were ignored (older, or after its end).
        public var ignored = 0
        /// Pushes applied, in order.
        public var applied = 0
    }

    public private(set) var activities: [String: Activity] = [:]

    public init() {}

    /// The board after `messages`, in the order given (validate-only ones reach no device).
    public init(_ messages: [RecordedMessage]) {
        for message in messages where !message.validateOnly { apply(message.message) }
    }

    /// Applies one accepted `message` object (messages without a Live Activity token are not
    /// the board's).
    public mutating func apply(_ message: JSONValue) {
        guard case .string(let token)? = message["apns"]?["live_activity_token"],
            let aps = message["apns"]?["payload"]?["aps"], case .string(let event)? = aps["event"], case .int(let timestamp)? = aps["timestamp"]
        else { return }
        if var shown = activities[token] {
            guard shown.event != "end", timestamp >= shown.timestamp else {
                shown.ignored += 1
                activities[token] = shown
                return
            }
            shown.event = event
            shown.timestamp = timestamp
            if let state = aps["content-state"] { shown.contentState = state }
            shown.applied += 1
            activities[token] = shown
        } else {
            activities[token] = Activity(event: event, timestamp: timestamp, contentState: aps["content-state"], applied: 1)
        }
    }

    public var json: JSONValue {
        .object(
            activities.sorted { $0.key < $1.key }.map { token, a in
                var members: [(key: String, value: JSONValue)] = [
                    ("applied", .int(Int64(a.applied))), ("event", .string(a.event)), ("ignored", .int(Int64(a.ignored))),
                    ("timestamp", .int(a.timestamp)),
                ]
                if let state = a.contentState { members.append(("content_state", state)) }
                return (token, .object(members))
            })
    }
}
