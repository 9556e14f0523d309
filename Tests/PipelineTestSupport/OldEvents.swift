import Dates
import JSON
import Kafka

/// Events of two event types with a `max_age`, some too old to send: shared by the in-process
/// pipeline test (mock cluster) and the end-to-end tests (tansu, `pushbridge run` and `replay`).
public enum OldEvents {
    /// `driver.arrived` is measured from its `at` field, dead-letters what is too old and gives
    /// the rest what is left of its 10 minutes; `promo` is measured from the Kafka timestamp and
    /// skips what is older than an hour.
    public static let mapping = """
        version: 1
        event: {id: /id}
        events:
          driver.arrived:
            target: {token: {field: /token}}
            body: {key: driver_here}
            max_age: 10m
            occurred_at: {field: /at}
            too_old: dead-letter
            ttl: remaining
          promo:
            target: {token: {field: /token}}
            body: {key: promo}
            max_age: 1h
        """

    /// `driver.arrived` to `token`, happened `secondsAgo` before `now` (milliseconds), with its
    /// time as RFC 3339; nil: without one.
    public static func arrived(_ token: String, secondsAgo: Int64?, now: Int64, topic: String) -> KafkaProducerRecord {
        let at = secondsAgo.map { #","at":"\#(RFC3339.format(milliseconds: now - $0 * 1000))""# } ?? ""
        let value = #"{"type":"driver.arrived","id":"\#(token)","token":"\#(token)"\#(at)}"#
        return KafkaProducerRecord(topic: topic, key: Array(token.utf8), value: Array(value.utf8))
    }

    /// `promo` to `token`, in a record stamped `secondsAgo` before `now` (milliseconds).
    public static func promo(_ token: String, secondsAgo: Int64, now: Int64, topic: String) -> KafkaProducerRecord {
        let value = #"{"type":"promo","id":"\#(token)","token":"\#(token)"}"#
        return KafkaProducerRecord(topic: topic, key: Array(token.utf8), value: Array(value.utf8), timestamp: now - secondsAgo * 1000)
    }

    /// A batch of each kind: fresh and old arrivals (3 minutes and 11 minutes old), one without
    /// its time, fresh and old promos (by 2 minutes and 2 hours). Tokens say which is which.
    public static func batch(now: Int64, topic: String) -> [KafkaProducerRecord] {
        (0..<4).map { arrived("fresh-arrived-\($0)", secondsAgo: 180, now: now, topic: topic) }
            + (0..<3).map { arrived("old-arrived-\($0)", secondsAgo: 660, now: now, topic: topic) }
            + [arrived("timeless-arrived", secondsAgo: nil, now: now, topic: topic)]
            + (0..<2).map { promo("fresh-promo-\($0)", secondsAgo: 120, now: now, topic: topic) }
            + (0..<2).map { promo("old-promo-\($0)", secondsAgo: 7200, now: now, topic: topic) }
    }

    /// The tokens a run of ``batch(now:topic:)`` must deliver, once each.
    public static let delivered: Set<String> = [
        "fresh-arrived-0", "fresh-arrived-1", "fresh-arrived-2", "fresh-arrived-3", "fresh-promo-0", "fresh-promo-1",
    ]
}
