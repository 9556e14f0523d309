import Dates
import FCM
import Kafka
import Mapping
import Pipeline
import Testing

@Suite("EventVerdict and output records: what becomes of an event, without I/O")
struct EventVerdictTests {
    func message(_ token: String) -> FCMMessage {
        FCMMessage(json: .object([("token", .string(token))]), target: MessageTarget(.token, token))
    }

    func failure(_ code: FCMError.Code, _ kind: FCMError.Kind, attempts: Int = 1) -> FCMClient.SendResult {
        FCMClient.SendResult(outcome: .failure(FCMError(code: code, kind: kind, httpStatus: 400, message: "m")), attempts: attempts)
    }

    let ok = FCMClient.SendResult(outcome: .success("projects/p/messages/1"), attempts: 1)

    @Test("all sends acknowledged → delivered")
    func delivered() {
        let v = EventVerdict.sends([(message("a"), ok), (message("b"), ok)])
        #expect(v == EventVerdict(disposition: .delivered, sent: 2))
    }

    @Test("UNREGISTERED → an invalidation record, and the event is done")
    func unregistered() {
        let v = EventVerdict.sends([(message("a"), ok), (message("dead"), failure(.unregistered, .tokenDead))])
        #expect(v.disposition == .delivered)
        #expect(v.invalidations == [TokenInvalidation(token: "dead", code: .unregistered)])
    }

    @Test("INVALID_ARGUMENT about the token (FCM's \"not a valid FCM registration token\") → an invalidation record, and the event is done")
    func invalidToken() {
        let v = EventVerdict.sends([(message("a"), ok), (message("garbage"), failure(.invalidArgument, .tokenDead))])
        #expect(v.disposition == .delivered)
        #expect(v.invalidations == [TokenInvalidation(token: "garbage", code: .invalidArgument)])
        // About the payload, it is the message's fault: dead-lettered, no invalidation.
        let payload = EventVerdict.sends([(message("a"), failure(.invalidArgument, .permanent))])
        #expect(payload.invalidations.isEmpty)
        guard case .deadLetter(let reason) = payload.disposition else {
            Issue.record("\(payload)")
            return
        }
        #expect(reason.code == "fcm_invalid_argument")
    }

    @Test("an FID FCM refuses is invalidated as an FID")
    func fidInvalidation() {
        let fid = FCMMessage(json: .object([("fid", .string("f-1"))]), target: MessageTarget(.fid, "f-1"))
        let v = EventVerdict.sends([(fid, failure(.unregistered, .tokenDead))])
        #expect(v.invalidations == [TokenInvalidation(MessageTarget(.fid, "f-1"), code: .unregistered)])
        #expect(v.invalidations.first?.kind == .fid)
        // A topic is never "invalidated": there is no device to delete.
        let topic = FCMMessage(json: .object([("topic", .string("news"))]), target: MessageTarget(.topic, "news"))
        #expect(EventVerdict.sends([(topic, failure(.unregistered, .tokenDead))]).invalidations.isEmpty)
    }

    @Test("a Live Activity send: UNREGISTERED invalidates the activity's token and keeps the device; INVALID_ARGUMENT about the token, the device")
    func liveActivity() throws {
        var update = message("fcm-A")
        let info = LiveActivityInfo(key: "o-2", event: .update, token: "la-9", timestamp: 1_800_000_000)
        update.liveActivity = info
        let gone = EventVerdict.sends([(update, failure(.unregistered, .tokenDead))])
        #expect(gone.disposition == .delivered)
        #expect(gone.invalidations == [TokenInvalidation(MessageTarget(.token, "fcm-A"), code: .unregistered, liveActivity: info)])
        let badDevice = EventVerdict.sends([(update, failure(.invalidArgument, .tokenDead))])
        #expect(badDevice.invalidations == [TokenInvalidation(token: "fcm-A", code: .invalidArgument)])
        let source = KafkaMessage(topic: "orders", partition: 3, offset: 1187, key: nil, value: [], headers: [], timestamp: nil)
        let record = OutputRecords.tokenInvalidation(
            try #require(gone.invalidations.first), topic: "inv", source: source, eventType: "order.progress", eventID: "e-1", project: "p",
            nowMilliseconds: 1_800_000_000_000)
        #expect(record.key == Array("la-9".utf8))
        #expect(
            String(decoding: record.value, as: UTF8.self)
                == #"{"activity":"o-2","event_id":"e-1","event_type":"order.progress","kind":"live_activity_token","live_activity_token":"la-9","project":"p","reason":"UNREGISTERED","source":"orders/3/1187","time":"2027-01-15T08:00:00.000Z","token":"fcm-A"}"#
        )
    }

    @Test("SENDER_ID_MISMATCH → an invalidation record and a dead-letter record")
    func senderMismatch() {
        let v = EventVerdict.sends([(message("alien"), failure(.senderIDMismatch, .tokenDead))])
        #expect(v.invalidations == [TokenInvalidation(token: "alien", code: .senderIDMismatch)])
        guard case .deadLetter(let reason) = v.disposition else {
            Issue.record("\(v)")
            return
        }
        #expect(reason.code == "fcm_sender_id_mismatch" && reason.fcmErrorCode == "SENDER_ID_MISMATCH")
    }

    @Test("a permanent error → dead-letter naming it; a fan-out says how many failed")
    func permanent() {
        let v = EventVerdict.sends([(message("a"), ok), (message("b"), failure(.thirdPartyAuthError, .permanent, attempts: 1))])
        guard case .deadLetter(let reason) = v.disposition else {
            Issue.record("\(v)")
            return
        }
        #expect(reason.code == "fcm_third_party_auth_error" && reason.attempts == 1)
        #expect(reason.reason.hasPrefix("1 of 2 sends failed"))
        #expect(v.sent == 1)
    }

    @Test("retries that ran out → dead-letter as fcm_retries_exhausted with the attempt count")
    func exhausted() {
        let v = EventVerdict.sends([(message("a"), failure(.unavailable, .retryable, attempts: 8))])
        guard case .deadLetter(let reason) = v.disposition else {
            Issue.record("\(v)")
            return
        }
        #expect(reason.code == "fcm_retries_exhausted" && reason.fcmErrorCode == "UNAVAILABLE" && reason.attempts == 8)
    }

    @Test("a configuration error stops the worker; a send cut by shutdown is abandoned")
    func notDone() {
        let fatal = EventVerdict.sends([(message("a"), failure(.tls, .configuration))])
        guard case .fatal = fatal.disposition else {
            Issue.record("\(fatal)")
            return
        }
        let abandoned = EventVerdict.sends([(message("a"), failure(.shutdown, .retryable)), (message("b"), failure(.unregistered, .tokenDead))])
        #expect(abandoned.disposition == .abandoned && abandoned.invalidations.isEmpty)
    }

    @Test("mapping failures: unknown types are skipped only when configured so")
    func mapping() {
        let unknown = MappingFailure.unknownEventType("x.y")
        #expect(EventVerdict.mappingFailed(unknown, skipUnknownTypes: true).disposition == .skipped(reason: unknown.reason))
        #expect(
            EventVerdict.mappingFailed(unknown, skipUnknownTypes: false).disposition
                == .deadLetter(DeadLetterReason(code: "unknown_event_type", reason: unknown.reason)))
        let bad = MappingFailure.invalidJSON("unexpected end of input at byte 3")
        #expect(
            EventVerdict.mappingFailed(bad, skipUnknownTypes: true).disposition
                == .deadLetter(DeadLetterReason(code: "invalid_json", reason: bad.reason)))
    }

    @Test("too old: skipped or dead-lettered (too_old) as the mapping says, and marked too old either way")
    func tooOld() {
        var old = TooOld(
            eventType: "driver.arrived", eventID: "e-1", ageMilliseconds: 700_000, maxAgeSeconds: 600, measuredFrom: "/at", action: .skip)
        let skipped = EventVerdict.mappingFailed(.tooOld(old), skipUnknownTypes: false)
        #expect(skipped.disposition == .skipped(reason: "the event is 11m40s old (from /at), over its max_age of 10m"))
        #expect(skipped.tooOld && skipped.skipCode == "too_old")
        old.action = .deadLetter
        let dead = EventVerdict.mappingFailed(.tooOld(old), skipUnknownTypes: true)
        #expect(dead.disposition == .deadLetter(DeadLetterReason(code: "too_old", reason: MappingFailure.tooOld(old).reason)))
        #expect(dead.tooOld)
        // An unreadable event time is a broken event, not an old one.
        let time = EventVerdict.mappingFailed(.invalidEventTime(field: "/at", reason: "missing or null"), skipUnknownTypes: true)
        #expect(
            time.disposition
                == .deadLetter(
                    DeadLetterReason(code: "invalid_event_time", reason: "max_age needs the event's time, and /at is not one: missing or null")))
        #expect(!time.tooOld && !EventVerdict.mappingFailed(.unknownEventType("x"), skipUnknownTypes: true).tooOld)
    }

    @Test("a dead-letter record keeps key, value and headers and adds the reason and the source")
    func deadLetterRecord() {
        let source = KafkaMessage(
            topic: "events", partition: 2, offset: 41, key: Array("k".utf8), value: Array("{bad".utf8),
            headers: [KafkaHeader(name: "trace", string: "t1")], timestamp: nil)
        let reason = DeadLetterReason(code: "fcm_retries_exhausted", reason: "gave up", fcmErrorCode: "UNAVAILABLE", attempts: 8)
        let r = OutputRecords.deadLetter(
            source, reason: reason, topic: "dlq", eventType: "user.welcome", eventID: "e1", nowMilliseconds: 1_795_000_000_123)
        #expect(r.topic == "dlq" && r.key == source.key && r.value == source.value)
        let h = Dictionary(r.headers.map { ($0.name, $0.stringValue ?? "") }, uniquingKeysWith: { a, _ in a })
        #expect(r.headers.first == KafkaHeader(name: "trace", string: "t1"))
        #expect(h["pushbridge-reason-code"] == "fcm_retries_exhausted" && h["pushbridge-fcm-error"] == "UNAVAILABLE")
        #expect(h["pushbridge-attempts"] == "8" && h["pushbridge-reason"] == "gave up")
        #expect(h["pushbridge-source-topic"] == "events" && h["pushbridge-source-partition"] == "2" && h["pushbridge-source-offset"] == "41")
        #expect(h["pushbridge-event-type"] == "user.welcome" && h["pushbridge-event-id"] == "e1")
        #expect(h["pushbridge-failed-at"] == "2026-11-18T11:06:40.123Z")
    }

    @Test("an invalidation record is JSON keyed by the identifier, which it names by its kind (token or fid)")
    func invalidationRecord() throws {
        let source = KafkaMessage(topic: "events", partition: 0, offset: 7, key: nil, value: [], headers: [], timestamp: nil)
        let r = OutputRecords.tokenInvalidation(
            TokenInvalidation(token: "tok", code: .unregistered), topic: "inv", source: source,
            eventType: "t", eventID: "e", nowMilliseconds: 0)
        #expect(r.key == Array("tok".utf8))
        #expect(
            try JSONParser.parse(r.value)
                == .object([
                    ("event_id", .string("e")), ("event_type", .string("t")), ("kind", .string("token")), ("reason", .string("UNREGISTERED")),
                    ("source", .string("events/0/7")), ("time", .string("1970-01-01T00:00:00.000Z")), ("token", .string("tok")),
                ]))
        let f = OutputRecords.tokenInvalidation(
            TokenInvalidation(MessageTarget(.fid, "f-1"), code: .invalidArgument), topic: "inv",
            source: source, eventType: nil, eventID: nil, nowMilliseconds: 0)
        #expect(f.key == Array("f-1".utf8))
        #expect(
            try JSONParser.parse(f.value)
                == .object([
                    ("fid", .string("f-1")), ("kind", .string("fid")), ("reason", .string("INVALID_ARGUMENT")),
                    ("source", .string("events/0/7")), ("time", .string("1970-01-01T00:00:00.000Z")),
                ]))
    }

    @Test("RFC 3339 timestamps across leap years and before the epoch")
    func timestamps() {
        #expect(RFC3339.format(milliseconds: 951_782_400_000) == "2000-02-29T00:00:00.000Z")
        #expect(RFC3339.format(milliseconds: 4_107_542_399_999) == "2100-02-28T23:59:59.999Z")
        #expect(RFC3339.format(milliseconds: -1) == "1969-12-31T23:59:59.999Z")
    }
}
