import FCM
import FCMEmulator
import Foundation
import Testing

/// The emulator refuses what FCM refuses, with FCM's INVALID_ARGUMENT shape and the field.
@Suite("FCM emulator validates payloads as FCM does", .serialized)
struct EmulatorValidationTests {
    static let cases: [(body: String, field: String)] = [
        (#"{"message":{"token":"a","topic":"b"}}"#, "message"),  // two targets
        (#"{"message":{"data":{"k":"v"}}}"#, "message"),  // no target
        (
            #"{"message":{"token":"a","android":{"notification":{"body_loc_key":"k","body_loc_args":["x",3]}}}}"#,
            "message.android.notification.body_loc_args[1]"
        ),
        (#"{"message":{"token":"a","android":{"notification":{"title_loc_args":["x"]}}}}"#, "message.android.notification.title_loc_args"),
        (#"{"message":{"token":"a","apns":{"payload":{"aps":{"alert":{"loc-args":["x"]}}}}}}"#, "message.apns.payload.aps.alert.loc-args"),
        (
            #"{"message":{"token":"a","apns":{"payload":{"aps":{"alert":{"loc-key":"K","loc-args":[1]}}}}}}"#,
            "message.apns.payload.aps.alert.loc-args[0]"
        ),
        (#"{"message":{"token":"a","android":{"ttl":"3600"}}}"#, "message.android.ttl"),
        (#"{"message":{"token":"a","android":{"ttl":"2419201s"}}}"#, "message.android.ttl"),
        (#"{"message":{"token":"a","android":{"priority":"URGENT"}}}"#, "message.android.priority"),
        (#"{"message":{"token":"a","android":{"notification":{"color":"red"}}}}"#, "message.android.notification.color"),
        (#"{"message":{"token":"a","data":{"n":1}}}"#, "message.data.n"),
        (#"{"message":{"token":"a","data":{"google.x":"v"}}}"#, "message.data.google.x"),
        (#"{"message":{"token":"a","data":{"from":"v"}}}"#, "message.data.from"),
        (#"{"message":{"token":"a","android":{"colour":"x"}}}"#, "message.android.colour"),
        (#"{"message":{"token":"a","apns":{"headers":{"apns-priority":"7"}}}}"#, "message.apns.headers.apns-priority"),
        (#"{"message":{"topic":"news","data":{"k":""#, ""),  // not JSON
        (#"{"message":{"fid":"f","token":"a"}}"#, "message"),  // fid is a target like the others
        (#"{"message":{"fid":""}}"#, "message.fid"),
        (#"{"message":{"topic":"news flash"}}"#, "message.topic"),
        (#"{"message":{"topic":"\#(String(repeating: "t", count: 901))"}}"#, "message.topic"),  // [a-zA-Z0-9-_.~%]{1,900}
        (#"{"message":{"condition":"'a' in topics &&"}}"#, "message.condition"),
        (
            #"{"message":{"condition":"'a' in topics && 'b' in topics && 'c' in topics && 'd' in topics && 'e' in topics && 'f' in topics"}}"#,
            "message.condition"
        ),
        (#"{"message":{"condition":"'a b' in topics"}}"#, "message.condition"),
        (#"{"message":{"condition":""}}"#, "message.condition"),
        // proto3 JSON: an int32 takes a number or a decimal string, never a fraction or words; null is refused inside a list.
        (#"{"message":{"token":"a","android":{"notification":{"notification_count":"three"}}}}"#, "message.android.notification.notification_count"),
        (#"{"message":{"token":"a","android":{"notification":{"notification_count":1.5}}}}"#, "message.android.notification.notification_count"),
        (#"{"message":{"token":"a","android":{"notification":{"notification_count":""}}}}"#, "message.android.notification.notification_count"),
        (
            #"{"message":{"token":"a","android":{"notification":{"body_loc_key":"k","body_loc_args":[null]}}}}"#,
            "message.android.notification.body_loc_args[0]"
        ),
        (#"{"message":{"token":"a","colour":null}}"#, "message.colour"),  // null still names a field, and this one is unknown
    ]

    @Test("each invalid payload class is refused with INVALID_ARGUMENT naming the field")
    func invalid() async throws {
        let f = try await EmulatorFixture.start()
        let client = try f.client()
        for (body, field) in Self.cases {
            guard case .failure(let error) = await client.attempt(Array(body.utf8)) else {
                Issue.record("accepted: \(body)")
                continue
            }
            #expect(error.httpStatus == 400 && error.code == .invalidArgument, "\(body)")
            if !field.isEmpty { #expect(error.fieldViolations.map(\.field).contains(field), "\(body): \(error.fieldViolations)") }
        }
        #expect(f.emulator.messages.isEmpty)
        await client.shutdown()
        await f.stop()
    }

    /// protobuf.dev, "ProtoJSON Format": int32 "Either numbers or strings are accepted"; "`null` is
    /// valid for any field and leaves the field unset". FCM's v1 API parses requests by these rules.
    @Test("what FCM accepts: fid targets, conditions, int32 as strings, null as unset")
    func accepted() async throws {
        let f = try await EmulatorFixture.start()
        let client = try f.client()
        for body in [
            #"{"message":{"fid":"cYz5ANl0QjePd9BlxiXjt8","android":{"notification":{"body_loc_key":"k"}}}}"#,
            #"{"message":{"condition":"'TopicA' in topics && ('TopicB' in topics || !('TopicC' in topics))"}}"#,
            #"{"message":{"topic":"/topics/news","data":{"k":"v"}}}"#,
            #"{"message":{"token":"a","android":{"notification":{"notification_count":"3"}}}}"#,
            #"{"message":{"token":"a","android":{"notification":{"notificationCount":"1e2"}}}}"#,
            #"{"message":{"token":"a","android":{"notification":{"notification_count":4.0}}}}"#,
            #"{"message":{"token":"a","topic":null,"android":{"notification":null,"ttl":null},"data":null}}"#,
        ] {
            let result = await client.attempt(Array(body.utf8))
            #expect((try? result.get()) != nil, "\(body): \(result)")
        }
        #expect(f.emulator.messages.first?.fid == "cYz5ANl0QjePd9BlxiXjt8")
        await client.shutdown()
        await f.stop()
    }

    @Test("size limits: 4096 bytes to a token, 2048 to a topic or a condition; lowerCamel names accepted")
    func sizesAndNames() async throws {
        let f = try await EmulatorFixture.start()
        let client = try f.client()
        let filler = String(repeating: "x", count: 2100)
        let tokenOK =
            #"{"message":{"token":"a","data":{"k":"\#(filler)"},"android":{"collapseKey":"c","notification":{"bodyLocKey":"k","bodyLocArgs":["1"]}}}}"#
        let topicTooBig = #"{"message":{"topic":"news","data":{"k":"\#(filler)"}}}"#
        let conditionTooBig = #"{"message":{"condition":"'news' in topics","data":{"k":"\#(filler)"}}}"#
        let tokenTooBig = #"{"message":{"token":"a","data":{"k":"\#(filler)\#(filler)"}}}"#
        #expect((try? await client.attempt(Array(tokenOK.utf8)).get()) != nil)
        for body in [topicTooBig, conditionTooBig, tokenTooBig] {
            guard case .failure(let error) = await client.attempt(Array(body.utf8)) else {
                Issue.record("accepted an oversize message")
                continue
            }
            // As FCM answers it (pushiko's "FCM responses"): no field, no details, and no token blamed.
            #expect(error.code == .invalidArgument && error.kind == .permanent && error.fieldViolations.isEmpty, "\(error)")
        }
        await client.shutdown()
        await f.stop()
    }
}
