import Foundation
import Mapping
import Testing

@Suite("Golden: event in, exact FCM v1 request body out")
struct GoldenTests {
    @Test("FCM docs: welcome title with [\"Alice\"]")
    func welcome() throws {
        #expect(
            try bodies(exampleMappings(), exampleEvent("welcome.json")) == [
                #"{"message":{"android":{"notification":{"title_loc_args":["Alice"],"title_loc_key":"welcome_title"}},"apns":{"headers":{"apns-push-type":"alert"},"payload":{"aps":{"alert":{"title-loc-args":["Alice"],"title-loc-key":"WELCOME_TITLE"}}}},"token":"bk3RNwTe3H0:CI2k_HHwgIpoDKCIZvvDMExUdFQ3P1"}}"#
            ])
    }

    @Test("FCM docs: new message body with [\"3\",\"Bob\"], the chat as collapse key and tag")
    func newMessage() throws {
        #expect(
            try bodies(exampleMappings(), exampleEvent("new-message.json")) == [
                #"{"message":{"android":{"collapse_key":"chat-42","notification":{"body_loc_args":["3","Bob"],"body_loc_key":"new_message_body","channel_id":"messages","tag":"chat-42"},"priority":"HIGH"},"apns":{"headers":{"apns-collapse-id":"chat-42","apns-priority":"10","apns-push-type":"alert"},"payload":{"aps":{"alert":{"loc-args":["3","Bob"],"loc-key":"NEW_MESSAGE_BODY"},"badge":3,"thread-id":"chat-42"}}},"token":"dGVzdC10b2tlbi1mb3ItYWxpY2U"}}"#
            ])
    }

    @Test("FCM docs: STOCK_NOTIFICATION_BODY to topic industry-tech with ttl 3600s on Android and as apns-expiration")
    func stock() throws {
        #expect(
            try bodies(exampleMappings(), exampleEvent("stock.json")) == [
                #"{"message":{"android":{"notification":{"body_loc_args":["FooCorp","11.80","835.67","1.43"],"body_loc_key":"STOCK_NOTIFICATION_BODY"},"ttl":"3600s"},"apns":{"headers":{"apns-expiration":"1800003600","apns-push-type":"alert"},"payload":{"aps":{"alert":{"loc-args":["FooCorp","11.80","835.67","1.43"],"loc-key":"STOCK_NOTIFICATION_BODY"}}}},"topic":"industry-tech"}}"#
            ])
    }

    static let orderMapping = """
        version: 1
        events:
          order.shipped:
            target: {tokens: {field: /customer/device_tokens}}
            body: {key: order_shipped_body, args: [{field: /order/number}]}
            platforms: [android]
        """

    @Test("CloudEvents structured mode fans out to 3 tokens, one message each")
    func cloudEventsStructuredFanOut() throws {
        let set = try load(Self.orderMapping)
        let out = try bodies(
            set,
            #"{"specversion":"1.0","type":"order.shipped","id":"e1","source":"/o","data":{"order":{"number":1042},"customer":{"device_tokens":["t1","t2","t3"]}}}"#
        )
        #expect(
            out
                == ["t1", "t2", "t3"].map {
                    #"{"message":{"android":{"notification":{"body_loc_args":["1042"],"body_loc_key":"order_shipped_body"}},"token":"\#($0)"}}"#
                })
    }

    @Test("CloudEvents structured mode is also recognised by its content-type header")
    func cloudEventsContentType() throws {
        let set = try load(Self.orderMapping)
        let out = try bodies(
            set, #"{"type":"order.shipped","id":"e1","data":{"order":{"number":7},"customer":{"device_tokens":["t"]}}}"#,
            headers: [("content-type", Array("application/cloudevents+json; charset=utf-8".utf8))])
        #expect(out.count == 1 && out[0].contains(#""body_loc_args":["7"]"#))
    }

    @Test("CloudEvents binary mode: ce_type and ce_id headers, the value is the data")
    func cloudEventsBinary() throws {
        let set = try load(
            """
            version: 1
            events:
              order.shipped:
                target: {token: {field: /token}}
                body: {key: order_shipped_body, args: [{field: /order/number}]}
                collapse_key: {from: event_id}
                platforms: [android]
            """)
        let out = try bodies(
            set, #"{"order":{"number":1042},"token":"tok"}"#,
            headers: [("ce_type", Array("order.shipped".utf8)), ("ce_id", Array("ce-99".utf8)), ("ce_specversion", Array("1.0".utf8))])
        #expect(
            out == [
                #"{"message":{"android":{"collapse_key":"ce-99","notification":{"body_loc_args":["1042"],"body_loc_key":"order_shipped_body"}},"token":"tok"}}"#
            ])
    }

    @Test("without an id, plain events are identified by their Kafka coordinates")
    func coordinatesAsID() throws {
        let set = try load(
            """
            version: 1
            events:
              ping:
                target: {topic: all}
                body: {key: ping}
                collapse_key: {from: event_id}
                platforms: [android]
            """)
        #expect(
            try bodies(set, #"{"type":"ping"}"#) == [
                #"{"message":{"android":{"collapse_key":"events/2/77","notification":{"body_loc_key":"ping"}},"topic":"all"}}"#
            ])
    }

    @Test(
        "stringification rules, one arg each",
        arguments: [
            (#""Bob""#, "Bob"),  // a string as is
            ("42", "42"),  // an integer: decimal
            ("-7", "-7"),
            ("9007199254740993", "9007199254740993"),  // 64-bit integers are exact
            ("12345678901234567890", "12345678901234567890"),  // and so are longer ones (IDs): every digit kept
            ("-98765432109876543210987", "-98765432109876543210987"),
            ("11.80", "11.8"),  // a float: shortest round-trip
            ("0.1", "0.1"),
            ("2.50", "2.5"),
            ("1e3", "1000"),
            ("1.5e-7", "1.5e-07"),
            ("-0.0", "-0"),  // negative zero keeps its sign: "0" reads back as +0.0
            ("-0e3", "-0"),
            ("0.0", "0"),
            ("-0", "0"),  // an integer has no negative zero
            ("true", "true"),  // booleans
            ("false", "false"),
            (#""Zoë 👋 \"x\"""#, #"Zoë 👋 \"x\""#),  // unicode and escapes survive (JSON-escaped in the body)
        ])
    func stringification(raw: String, expected: String) throws {
        let set = try load(
            """
            version: 1
            events:
              e:
                target: {token: t}
                body: {key: k, args: [{field: /v}]}
                platforms: [android]
            """)
        let out = try bodies(set, #"{"type":"e","v":\#(raw)}"#)
        #expect(out == [#"{"message":{"android":{"notification":{"body_loc_args":["\#(expected)"],"body_loc_key":"k"}},"token":"t"}}"#])
    }

    /// Negative zero keeps its sign whatever the source: a JSON number (above), an Avro or a
    /// Protobuf double and float, each the sign bit alone.
    @Test("-0.0 is \"-0\" from Avro and Protobuf doubles and floats too")
    func negativeZeroFromSchemaRecords() throws {
        let set = try load(
            """
            version: 1
            events:
              acme.Z:
                target: {token: t}
                body: {key: k, args: [{field: /d}, {field: /f}]}
                platforms: [android]
            """)
        let avro = try AvroSchema(
            parsing: #"{"type":"record","name":"Z","namespace":"acme","fields":[{"name":"d","type":"double"},{"name":"f","type":"float"}]}"#)
        let proto = try ProtobufSchema(schema: #"syntax = "proto3"; package acme; message Z { double d = 1; float f = 2; }"#)
        let negativeZero: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0x80]
        // Confluent's frame (ID 1; Protobuf: message indexes [0]), then Avro's little-endian
        // values, or Protobuf's fixed64 (tag 0x09) and fixed32 (tag 0x15).
        let records: [(WriterSchema, [UInt8])] = [
            (.avro(avro), [0, 0, 0, 0, 1] + negativeZero + negativeZero.suffix(4)),
            (.protobuf(proto), [0, 0, 0, 0, 1, 0, 0x09] + negativeZero + [0x15] + negativeZero.suffix(4)),
        ]
        for (schema, value) in records {
            let rendered = try set.render(EventRecord(value: value), schema: schema, now: renderNow).get()
            let body = String(decoding: try #require(rendered.messages.first).requestBody(), as: UTF8.self)
            #expect(body.contains(#""body_loc_args":["-0","-0"]"#), "\(schema.kind): \(body)")
        }
    }

    @Test("null or missing takes the default; without one the event fails naming the field")
    func nullAndMissing() throws {
        let set = try load(
            """
            version: 1
            events:
              e:
                target: {token: t}
                body: {key: k, args: [{field: /a, default: "someone"}, {field: /b}]}
                platforms: [android]
            """)
        #expect(try bodies(set, #"{"type":"e","a":null,"b":"x"}"#)[0].contains(#"["someone","x"]"#))
        #expect(try bodies(set, #"{"type":"e","b":"x"}"#)[0].contains(#"["someone","x"]"#))
        #expect(failure(set, #"{"type":"e","a":"x"}"#) == .missingField(field: "/b", role: "body arg 2"))
        #expect(failure(set, #"{"type":"e","a":"x","b":null}"#)?.reason == "body arg 2: field /b is missing or null and has no default")
    }

    @Test("an array or object arg is an error")
    func compositeArgs() throws {
        let set = try load(
            """
            version: 1
            events:
              e:
                target: {token: t}
                body: {key: k, args: [{field: /v}]}
            """)
        #expect(failure(set, #"{"type":"e","v":[1]}"#) == .wrongType(field: "/v", expected: "a string, number or boolean", found: "array"))
        #expect(failure(set, #"{"type":"e","v":{"a":1}}"#)?.code == "wrong_type")
    }

    @Test("silent push: content-available, apns-priority 5, background, data only")
    func silent() throws {
        #expect(
            try bodies(exampleMappings(), exampleEvent("inbox-sync.json")) == [
                #"{"message":{"apns":{"headers":{"apns-priority":"5","apns-push-type":"background"},"payload":{"aps":{"content-available":1}}},"data":{"mailbox":"work","since":"1795300000"},"fid":"fid-background"}}"#
            ])
    }

    @Test("all options: ttl, replace_id, Android and APNs options, data, analytics label")
    func options() throws {
        let out = try bodies(exampleMappings(), exampleEvent("order-shipped.cloudevent.json"))
        #expect(out.count == 3)
        #expect(
            out[0]
                == ##"{"message":{"android":{"notification":{"body_loc_args":["1042","DHL"],"body_loc_key":"order_shipped_body","channel_id":"orders","click_action":"OPEN_ORDER","color":"#3366ff","icon":"ic_shipping","tag":"evt-1004","title_loc_key":"order_shipped_title"},"ttl":"172800s"},"apns":{"headers":{"apns-collapse-id":"evt-1004","apns-expiration":"1800172800","apns-push-type":"alert"},"payload":{"aps":{"alert":{"loc-args":["1042","DHL"],"loc-key":"ORDER_SHIPPED_BODY","title-loc-key":"ORDER_SHIPPED_TITLE"},"category":"ORDER","sound":"default"}}},"data":{"order_id":"o-77","screen":"order_detail"},"fcm_options":{"analytics_label":"order_shipped"},"token":"token-phone"}}"##
        )
    }

    @Test("validate_only is added for dry runs")
    func validateOnly() throws {
        let set = try exampleMappings()
        let message = try set.render(EventRecord(value: Array(try exampleEvent("welcome.json").utf8))).get().messages[0]
        #expect(String(decoding: message.requestBody(validateOnly: true), as: UTF8.self).hasSuffix(#","validate_only":true}"#))
        #expect(message.target == MessageTarget(.token, "bk3RNwTe3H0:CI2k_HHwgIpoDKCIZvvDMExUdFQ3P1"))
    }
}
