/// One Live Activity push in flight per activity, the others waiting in offset order, and
/// older waiting updates replaced by newer ones (docs/mapping.md, *Live Activities*). A pure
/// state machine: the worker holds it behind a lock and does what it answers.
///
/// Why: two updates of one activity in flight at once may be accepted by FCM in either order
/// (a retry, a slow connection), and APNs keeps one notification for an offline device, "in
/// most cases the latest" it received (Apple, "Sending notification requests to APNs"). The
/// timestamp makes the device ignore an older update, but not one of the same second, and not
/// one APNs stored in place of the newer. Sent one at a time, in offset order, the last push
/// received is the newest.
///
/// Runners render a partition's events side by side, so they reach the lanes in any order.
/// Each event takes a ticket when it is read (``admit(_:)``) and resolves it once rendered:
/// ``arrive(_:at:_:replaceable:)`` for a Live Activity push, ``pass(_:)`` for anything else.
/// Arrivals are taken in ticket order, so a partition's pushes meet their lane in offset order.
struct ActivityLanes<Item> {
    typealias Key = ActivityLaneKey

    /// Where an event stands in its partition.
    struct Position: Equatable, Sendable {
        var partition: Int32
        var offset: Int64
    }

    /// What the caller does, in order.
    enum Action {
        /// Send it now: it holds its lane until ``finish(_:)``.
        case go(Item)
        /// Finish it without a send: a newer push of its activity and partition replaced it
        /// while it waited, or was already ahead of it.
        case supersede(Item)
    }

    private struct Arrival {
        var key: Key
        var position: Position
        var item: Item
        /// An update without an alert: a newer event of the same partition replaces it.
        var replaceable: Bool
        /// How long the next push waits once this one is answered (`min_interval`).
        var pause: Duration?
    }

    private struct Lane {
        var inFlight: Position
        var pause: Duration?
        var waiting: [Arrival] = []
    }

    /// A partition's tickets in the order read; an arrival resolves its ticket, nil for a pass.
    private struct Ticket {
        var offset: Int64
        var resolved = false
        var arrival: Arrival?
    }

    private var lanes: [Key: Lane] = [:]
    private var tickets: [Int32: [Ticket]] = [:]

    /// Lanes with a push in flight.
    var busy: Int { lanes.count }
    /// Events read and not yet taken in order.
    var ticketsOpen: Int { tickets.values.reduce(0) { $0 + $1.count } }

    /// An event was read: its place in its partition's order.
    mutating func admit(_ position: Position) {
        tickets[position.partition, default: []].append(Ticket(offset: position.offset))
    }

    /// An event that is no Live Activity push was rendered (or given up).
    mutating func pass(_ position: Position) -> [Action] {
        resolve(position, nil)
    }

    /// A Live Activity push of activity `key` was rendered. `pause`: once it is answered, how
    /// long its lane stays closed (its mapping's `min_interval`).
    mutating func arrive(_ key: Key, at position: Position, _ item: Item, replaceable: Bool, pause: Duration? = nil) -> [Action] {
        resolve(position, Arrival(key: key, position: position, item: item, replaceable: replaceable, pause: pause))
    }

    /// How long `key`'s lane stays closed after its push in flight is answered, before
    /// ``finish(_:)``: pushes that arrive meanwhile wait, and newer updates replace older ones.
    func pause(_ key: Key) -> Duration? {
        lanes[key]?.pause
    }

    /// The push in flight on `key`'s lane ended (done or not). Returns the next one, which now
    /// holds the lane, or nil: the lane is free.
    mutating func finish(_ key: Key) -> Item? {
        guard var lane = lanes[key] else { return nil }
        guard !lane.waiting.isEmpty else {
            lanes[key] = nil
            return nil
        }
        let next = lane.waiting.removeFirst()
        lane.inFlight = next.position
        lane.pause = next.pause
        lanes[key] = lane
        return next.item
    }

    private mutating func resolve(_ position: Position, _ arrival: Arrival?) -> [Action] {
        guard var list = tickets[position.partition] else { return arrival.map { take($0) } ?? [] }
        if let i = list.firstIndex(where: { !$0.resolved && $0.offset == position.offset }) {
            list[i].resolved = true
            list[i].arrival = arrival
        } else if let arrival {
            return take(arrival)  // never admitted (a test, or a partition re-read): at once
        }
        var actions: [Action] = []
        var taken = 0
        while taken < list.count, list[taken].resolved {
            if let arrival = list[taken].arrival { actions += take(arrival) }
            taken += 1
        }
        list.removeFirst(taken)
        tickets[position.partition] = list.isEmpty ? nil : list
        return actions
    }

    /// Takes an arrival to its lane, in its partition's order.
    private mutating func take(_ arrival: Arrival) -> [Action] {
        guard var lane = lanes[arrival.key] else {
            lanes[arrival.key] = Lane(inFlight: arrival.position, pause: arrival.pause)
            return [.go(arrival.item)]
        }
        let position = arrival.position
        // A newer push of its partition is ahead already (its partition read again after a
        // rebalance, while the old read's push is still in flight): it would arrive older.
        let ahead = [lane.inFlight] + lane.waiting.map(\.position)
        if ahead.contains(where: { $0.partition == position.partition && $0.offset > position.offset }) { return [.supersede(arrival.item)] }
        var actions: [Action] = []
        lane.waiting.removeAll { waiting in
            let goes = waiting.replaceable && waiting.position.partition == position.partition && waiting.position.offset < position.offset
            if goes { actions.append(.supersede(waiting.item)) }
            return goes
        }
        lane.waiting.append(arrival)
        lanes[arrival.key] = lane
        return actions
    }
}

/// An activity: its Firebase project and its key (an order ID).
public struct ActivityLaneKey: Hashable, Sendable {
    var project: String
    var activity: String
}
