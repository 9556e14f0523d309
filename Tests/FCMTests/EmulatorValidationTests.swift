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
        (#"{"message":{"token":"a","android":{"notification":{"body_loc_key":"k","body_loc_args":["x",3]}}}}"#, "message.android.notification.body_loc_args[1]"),
        (#"{"message":{"token":"a","android":{"notification":{"title_loc_args":["x"]}}}}"#, "message.android.notification.title_loc_args"),
        (#"{"message":{"token":"a","apns":{"payload":{"aps":{"alert":{"loc-args":["x"]}}}}}}"#, "message.apns.payload.aps.alert.loc-args"),
        (#"{"message":{"token":"a","apns":{"payload":{"aps":{"alert":{"loc-key":"K","loc-args":[1]}}}}}}"#, "message.apns.payload.aps.alert.loc-args[0]"),
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
            #expect(error.httpStatus == 400 && error.code == "INVALID_ARGUMENT", "\(body)")
            if !field.isEmpty { #expect(error.fieldViolations.map(\.field).contains(field), "\(body): \(error.fieldViolations)") }
        }
        #expect(f.emulator.messages.isEmpty)
        await client.shutdown()
        await f.stop()
    }

    @Test("size limits: 4096 bytes to a token, 2048 to a topic; lowerCamel names accepted")
    func sizesAndNames() async throws {
        let f = try await EmulatorFixture.start()
        let client = try f.client()
        let filler = String(repeating: "x", count: 2100)
        let tokenOK = #"{"message":{"token":"a","data":{"k":"\#(filler)"},"android":{"collapseKey":"c","notification":{"bodyLocKey":"k","bodyLocArgs":["1"]}}}}"#
        let topicTooBig = #"{"message":{"topic":"news","data":{"k":"\#(filler)"}}}"#
        let tokenTooBig = #"{"message":{"token":"a","data":{"k":"\#(filler)\#(filler)"}}}"#
        #expect((try? await client.attempt(Array(tokenOK.utf8)).get()) != nil)
        for body in [topicTooBig, tokenTooBig] {
            guard case .failure(let error) = await client.attempt(Array(body.utf8)) else {
                Issue.record("accepted an oversize message")
                continue
            }
            #expect(error.code == "INVALID_ARGUMENT" && error.message.contains("too big"))
        }
        await client.shutdown()
        await f.stop()
    }
}
