import Kafka
import Mapping

// Re-key mode of `cap` and `dedup` (docs/rules.md#caps-and-dedup; design §5.6): on a topic not
// keyed by user, the main pipeline (stage 1), and `pushbridge replay` unless told to send them
// itself, writes each event of a capped or deduplicated mapping to the by-subject topic, keyed
// by its subject, and is done with it once Kafka has it; the rules pipeline (stage 2) reads
// that topic, where a partition is a state partition, and decides. The record keeps its value,
// headers and timestamp, and gains `pushbridge-source`: its source coordinates, so an event
// without an ID has the same ID in both stages and a replay of the source is recognised.
extension EventProcessor {
    /// The header naming a re-keyed record's source coordinates, `topic/partition/offset`.
    public static let sourceHeader = "pushbridge-source"
    /// The skip code of an event written to the by-subject topic (``rekey(_:subject:to:)``):
    /// not sent here, the rules stage decides (a replay counts it as handed to that stage).
    public static let rekeyedCode = "rekeyed"

    /// The record the mappings read for `message`: in the rules pipeline, with the source
    /// coordinates a re-keyed record carries (an event without an ID takes them as its ID).
    func eventRecord(_ message: KafkaMessage) -> EventRecord {
        guard options.sourceFromHeader, let source = Self.sourceCoordinates(message) else { return EventRecord(message) }
        return EventRecord(
            value: message.value, headers: message.headers.map { ($0.name, $0.value) }, topic: source.topic, partition: source.partition,
            offset: source.offset, timestamp: message.timestamp?.milliseconds)
    }

    /// `pushbridge-source`'s `topic/partition/offset` (a topic name has no `/`).
    static func sourceCoordinates(_ message: KafkaMessage) -> (topic: String, partition: Int32, offset: Int64)? {
        guard let value = message.headers.last(where: { $0.name == sourceHeader })?.value else { return nil }
        let parts = String(decoding: value, as: UTF8.self).split(separator: "/")
        guard parts.count == 3, let partition = Int32(parts[1]), let offset = Int64(parts[2]) else { return nil }
        return (String(parts[0]), partition, offset)
    }

    /// Writes `message` to the by-subject topic keyed by `subject`: done once Kafka has it (not
    /// done if the worker stops first). Counted in `pushbridge_rules_rekeyed_total`, not as
    /// delivered or skipped: the rules pipeline counts how it ends.
    func rekey(_ message: KafkaMessage, subject: String, to topic: String) async -> Outcome {
        var headers = message.headers.filter { $0.name != Self.sourceHeader }
        headers.append(KafkaHeader(name: Self.sourceHeader, value: Array("\(message.topic)/\(message.partition)/\(message.offset)".utf8)))
        let record = KafkaProducerRecord(
            topic: topic, key: Array(subject.utf8), value: message.value, headers: headers, timestamp: message.timestamp?.milliseconds)
        guard await write(record, for: message) else { return Outcome(verdict: EventVerdict(disposition: .abandoned), done: false) }
        metrics.rulesRekeyed.increment()
        var verdict = EventVerdict(disposition: .skipped(reason: "re-keyed by subject to \(topic)"))
        verdict.skipCode = Self.rekeyedCode
        return Outcome(verdict: verdict, done: true)
    }
}
