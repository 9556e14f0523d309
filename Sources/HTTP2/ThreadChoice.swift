/// Which of an ``HTTP2Client``'s threads takes a request, from each thread's open connections
/// and requests in flight. Pure.
///
/// - Of the threads with a free stream on their connections, the one with the fewest requests
///   takes it: traffic fills the connections that are open before any thread opens another,
///   and is shared evenly by the threads that have them (each drives up to about one core).
/// - When every stream is busy, the thread with the fewest connections (then the fewest
///   requests) takes it and opens one, so connections spread over the threads too.
///
/// Sending each request to the *first* thread with a free stream starves the others: once that
/// thread has connections for all the traffic, the rest get none (measured in
/// docs/benchmarks-history.md). Choosing the most free streams instead would still leave the
/// thread with fewer connections a small share.
///
/// ```swift
/// var choice = ThreadChoice(streamsPerConnection: 100)
/// for (i, loop) in loops.enumerated() { choice.consider(i, Load(connections: …, requests: …)) }
/// loops[choice.chosen]   // no array per request
/// ```
struct ThreadChoice {
    struct Load: Equatable {
        var connections: Int
        var requests: Int
    }

    let streamsPerConnection: Int
    private var leastBusy: (index: Int, requests: Int)?
    private var fewest: (index: Int, load: Load)?

    init(streamsPerConnection: Int) {
        self.streamsPerConnection = max(1, streamsPerConnection)
    }

    /// Takes thread `index`'s load into account; threads are considered in order, and the
    /// first of equals wins.
    mutating func consider(_ index: Int, _ load: Load) {
        let free = Self.usableConnections(load) * streamsPerConnection - load.requests
        if free > 0, load.requests < leastBusy?.requests ?? .max { leastBusy = (index, load.requests) }
        if fewest.map({ (load.connections, load.requests) < ($0.load.connections, $0.load.requests) }) ?? true {
            fewest = (index, load)
        }
    }

    /// The thread to take the request: the least busy with a free stream, else the one with the
    /// fewest connections (then requests); 0 if none was considered.
    var chosen: Int { leastBusy?.index ?? fewest?.index ?? 0 }

    /// The choice among `loads`, in order.
    static func choose(_ loads: [Load], streamsPerConnection: Int) -> Int {
        var choice = ThreadChoice(streamsPerConnection: streamsPerConnection)
        for (i, load) in loads.enumerated() { choice.consider(i, load) }
        return choice.chosen
    }

    /// A thread with requests and no connection yet is opening one: its streams count, so
    /// light traffic stays with it instead of opening a connection on another thread.
    private static func usableConnections(_ load: Load) -> Int {
        max(load.connections, load.requests > 0 ? 1 : 0)
    }
}
