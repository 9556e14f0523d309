import Dates
import Testing

@testable import Mapping

/// An event's age at a fixed clock (``renderNow``), and what `max_age` and `ttl: remaining` make
/// of it, through ``MappingSet/render(_:now:maxAge:)`` as the pipeline calls it.
@Suite("max_age and ttl: remaining: rendering at a fixed clock")
struct MaxAgeRenderTests {
    static let mappings = """
        version: 1
        events:
          driver.arrived:
            target: {token: {field: /token}}
            body: {key: driver_here}
            max_age: 10m
            occurred_at: {field: /at}
            too_old: dead-letter
            ttl: remaining
          ride.offer:
            target: {token: {field: /token}}
            body: {key: offer}
            max_age: 2m
            occurred_at: {field: /at, unit: s}
          promo:
            target: {topic: deals}
            body: {key: promo}
            max_age: 1h
            ttl: remaining
        """

    /// The render clock in milliseconds, minus `seconds`.
    static func ago(_ seconds: Int64) -> Int64 { renderNow * 1000 - seconds * 1000 }

    func render(_ json: String, timestamp: Int64? = nil, check: MaxAgeCheck = .enforce) throws -> Result<MappingSet.Rendered, MappingFailure> {
        try load(Self.mappings).render(EventRecord(value: Array(json.utf8), timestamp: timestamp), now: renderNow, maxAge: check)
    }

    struct TTLs: Equatable {
        var android: String?
        var apns: String?
    }

    /// Android's `ttl` and `apns-expiration` of the one message rendered.
    func ttls(_ result: Result<MappingSet.Rendered, MappingFailure>) throws -> TTLs {
        let message = try #require(try result.get().messages.first)
        let json = try JSONParser.parse(message.encoded)
        return TTLs(android: json["android"]?["ttl"]?.stringValue, apns: json["apns"]?["headers"]?["apns-expiration"]?.stringValue)
    }

    @Test("a fresh event: ttl is what is left of max_age, on Android and as apns-expiration")
    func remaining() throws {
        let at = RFC3339.format(milliseconds: Self.ago(240))  // 4 minutes old, of 10
        let result = try render(#"{"type":"driver.arrived","token":"t","at":"\#(at)"}"#)
        #expect(try ttls(result) == TTLs(android: "360s", apns: String(renderNow + 360)))
    }

    @Test("older than max_age: too_old, with its type, ID (here the Kafka coordinates), age and what to do with it")
    func tooOld() throws {
        let at = RFC3339.format(milliseconds: Self.ago(601))
        let result = try render(#"{"type":"driver.arrived","id":"e-1","token":"t","at":"\#(at)"}"#)
        let expected = TooOld(
            eventType: "driver.arrived", eventID: "events/0/0", ageMilliseconds: 601_000, maxAgeSeconds: 600, measuredFrom: "/at", action: .deadLetter
        )
        #expect(result.map(\.messages) == .failure(.tooOld(expected)))
        #expect(MappingFailure.tooOld(expected).code == "too_old")
        #expect(MappingFailure.tooOld(expected).reason == "the event is 10m1s old (from /at), over its max_age of 10m")
    }

    @Test("exactly max_age old is still sent, with nothing left: deliver now or never")
    func exactlyMaxAge() throws {
        let result = try render(#"{"type":"driver.arrived","token":"t","at":"\#(RFC3339.format(milliseconds: Self.ago(600)))"}"#)
        #expect(try ttls(result) == TTLs(android: "0s", apns: "0"))
    }

    @Test("times: RFC 3339 with an offset, epoch milliseconds, epoch seconds with unit: s, a clock ahead of ours")
    func timeForms() throws {
        // 08:00:00Z minus 5 minutes, written in +01:00.
        let offset = try render(#"{"type":"driver.arrived","token":"t","at":"2027-01-15T08:55:00+01:00"}"#)
        #expect(try ttls(offset).android == "300s")
        let millis = try render(#"{"type":"driver.arrived","token":"t","at":\#(Self.ago(30) + 500)}"#)
        #expect(try ttls(millis).android == "570s", "30 s less half a second old: 570.5 s left, rounded down")
        let seconds = try render(#"{"type":"ride.offer","token":"t","at":\#(renderNow - 121)}"#)
        #expect(seconds.map(\.messages).failureCode == "too_old")
        #expect(try render(#"{"type":"ride.offer","token":"t","at":\#(renderNow - 119)}"#).map(\.messages).failureCode == nil)
        let future = try render(#"{"type":"driver.arrived","token":"t","at":\#(Self.ago(-3600))}"#)
        #expect(try ttls(future).android == "600s", "a producer clock ahead of ours is age 0, never more time")
    }

    @Test(
        "a missing or unreadable event time is invalid_event_time, never guessed",
        arguments: [
            (#""token":"t""#, "max_age needs the event's time, and /at is not one: missing or null"),
            (#""token":"t","at":null"#, "max_age needs the event's time, and /at is not one: missing or null"),
            (
                #""token":"t","at":"2027-01-15 08:00""#,
                "max_age needs the event's time, and /at is not one: \"2027-01-15 08:00\" is not an RFC 3339 time with a zone"
            ),
            (#""token":"t","at":true"#, "max_age needs the event's time, and /at is not one: boolean, expected an RFC 3339 string or epoch ms"),
            (#""token":"t","at":1e300"#, "max_age needs the event's time, and /at is not one: 1e+300 is not a time in epoch ms"),
        ])
    func invalidTime(members: String, reason: String) throws {
        let result = try render(#"{"type":"driver.arrived",\#(members)}"#)
        guard case .failure(let failure) = result else {
            Issue.record("rendered \(result)")
            return
        }
        #expect(failure.code == "invalid_event_time")
        #expect(failure.reason == reason)
    }

    @Test("without occurred_at, the Kafka timestamp; a record without one is invalid_event_time")
    func recordTimestamp() throws {
        let json = #"{"type":"promo"}"#
        #expect(try ttls(try render(json, timestamp: Self.ago(600))) == TTLs(android: "3000s", apns: String(renderNow + 3000)))
        #expect(try render(json, timestamp: Self.ago(3601)).map(\.messages).failureCode == "too_old")
        guard case .failure(.invalidEventTime(let field, let why)) = try render(json) else {
            Issue.record("expected invalid_event_time")
            return
        }
        #expect(field == "the Kafka timestamp" && why.contains("set `occurred_at`"))
    }

    @Test("ignored (replay --ignore-max-age): old events render with the whole max_age, and their time is not read")
    func ignored() throws {
        let old = try render(#"{"type":"driver.arrived","token":"t","at":"2020-01-01T00:00:00Z"}"#, check: .ignore)
        #expect(try ttls(old) == TTLs(android: "600s", apns: String(renderNow + 600)))
        let noTime = try render(#"{"type":"promo"}"#, check: .ignore)
        #expect(try ttls(noTime).android == "3600s")
    }

    @Test("the template and the tree render ttl: remaining alike")
    func templateAgrees() throws {
        let set = try load(Self.mappings)
        let mapping = try #require(set.mappings["driver.arrived"])
        let template = try #require(mapping.template)
        let event = try set.eventFormat.decode(EventRecord(value: Array(#"{"type":"driver.arrived","token":"t"}"#.utf8))).get()
        for remaining in [0, 1, 599, 600] {
            let a = try template.render(event, now: renderNow, remainingTTL: remaining).map(\.encoded)
            let b = try mapping.renderTree(event, now: renderNow, remainingTTL: remaining).map(\.encoded)
            #expect(a == b, "\(remaining)")
        }
    }

    @Test("a CloudEvent's time field is read from its data, which sparse decoding keeps")
    func cloudEvents() throws {
        let at = RFC3339.format(milliseconds: Self.ago(60))
        let json = #"{"specversion":"1.0","type":"driver.arrived","id":"c1","source":"s","data":{"token":"t","at":"\#(at)","big":[1,2,3]}}"#
        #expect(try ttls(try render(json)).android == "540s")
    }
}

extension Result where Failure == MappingFailure {
    var failureCode: String? {
        if case .failure(let f) = self { f.code } else { nil }
    }
}
