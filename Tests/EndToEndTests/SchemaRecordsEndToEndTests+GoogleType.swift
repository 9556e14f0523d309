import FCMEmulator
import Foundation
import Kafka
import TestSupport
import Testing

/// Google's common types end to end: records with a field of each `google/type/*` message and
/// enum, written by confluent-kafka's ProtobufSerializer with its default settings (the schema
/// registered without references), become pushes whose args and data are the strings
/// docs/mapping.md gives; a schema whose import pushbridge does not build in is dead-lettered,
/// naming the import, and the partition goes on.
extension SchemaRecordsEndToEndTests {
    /// Each field read, with the string it becomes for the fixture's two stores (`-`: missing,
    /// the mapping's default): `records/store-opened.protobuf.jsonl`.
    static let storeFields: [(pointer: String, first: String, second: String)] = [
        ("/location/latitude", "48.8584", "-33.8568"), ("/location/longitude", "2.2945", "-0"),
        ("/opening_date/year", "2026", "-"), ("/opening_date/month", "3", "-"), ("/opening_date/day", "14", "-"),
        ("/entry_fee/currency_code", "EUR", "USD"), ("/entry_fee/units", "149", "-2"), ("/entry_fee/nanos", "900000000", "-500000000"),
        ("/opens_at/hours", "9", "-"), ("/opens_at/minutes", "30", "-"), ("/opens_at/seconds", "0", "-"), ("/opens_at/nanos", "0", "-"),
        ("/closed_on", "SUNDAY", "MONDAY"), ("/peak_month", "DECEMBER", "MONTH_UNSPECIFIED"),
        ("/report_period", "WEEK", "CALENDAR_PERIOD_UNSPECIFIED"),
        ("/brand_color/red", "1", "0.1"), ("/brand_color/green", "0.5", "0"), ("/brand_color/blue", "0.25", "0"),
        ("/brand_color/alpha", "0.8", "-"),
        ("/grand_opening/year", "2026", "2026"), ("/grand_opening/month", "3", "12"), ("/grand_opening/day", "14", "31"),
        ("/grand_opening/hours", "18", "23"), ("/grand_opening/minutes", "30", "59"), ("/grand_opening/seconds", "0", "59"),
        ("/grand_opening/nanos", "0", "5000000"), ("/grand_opening/utc_offset", "3600s", "-"),
        ("/grand_opening/time_zone/id", "-", "America/New_York"), ("/zone/id", "Europe/Paris", "-"), ("/zone/version", "2025b", "-"),
        ("/rating/value", "4.50", "-"), ("/access_rule/expression", "age >= 18", "-"), ("/access_rule/title", "Adults", "-"),
        ("/access_rule/description", "", "-"), ("/share/numerator", "1", "-"), ("/share/denominator", "3", "-"),
        ("/opening_week/start_time", "2026-03-14T09:00:00Z", "-"), ("/opening_week/end_time", "2026-03-21T18:00:00.500Z", "-"),
        ("/greeting/text", "Bienvenue", "-"), ("/greeting/language_code", "fr", "-"),
        ("/phone/e164_number", "+33123456789", "-"), ("/phone/short_code/number", "-", "911"), ("/phone/extension", "12", ""),
        ("/hotline/region_code", "FR", "-"), ("/hotline/number", "3949", "-"),
        ("/address/region_code", "FR", "-"), ("/address/postal_code", "75007", "-"), ("/address/locality", "Paris", "-"),
        ("/address/address_lines/1", "Champ de Mars", "-"), ("/address/recipients/0", "Acme", "-"), ("/address/revision", "0", "-"),
        ("/sign_orientation/x", "0.5", "-"), ("/sign_orientation/y", "-0", "-"), ("/sign_orientation/z", "0.7071", "-"),
        ("/sign_orientation/w", "-0.25", "-"),
    ]

    /// Body args from Money, DayOfWeek and LatLng; every field above as a data value, keyed by
    /// its pointer's tokens joined with dots.
    static var storeMapping: String {
        let data = storeFields.map { "      \(dataKey($0.pointer)): {field: \($0.pointer), default: \"-\"}" }
        return """
            version: 1
            events:
              acme.stores.v1.StoreOpened:
                target: {topic: {field: /user_id}}
                body:
                  key: store_opened_body
                  args:
                    - {field: /entry_fee/units}
                    - {field: /entry_fee/currency_code}
                    - {field: /closed_on}
                    - {field: /location/longitude, default: "-"}
                data:

            """ + data.joined(separator: "\n") + "\n"
    }

    static func dataKey(_ pointer: String) -> String { pointer.dropFirst().replacingOccurrences(of: "/", with: ".") }

    @Test(
        "google/type records (each message and enum) become pushes with the documented strings; a schema importing a google/type file pushbridge lacks is dead-lettered naming it, and the partition goes on"
    )
    func googleTypes() async throws {
        let e = try await EndToEnd(partitions: 1)
        let registry = try await SchemaRegistryServer.start()
        try Self.storeMapping.write(to: e.directory.appendingPathComponent("mappings.yaml"), atomically: true, encoding: .utf8)
        // First in the partition: a record whose schema imports a file no serializer registers and
        // pushbridge does not build in (as a google/type file newer than pushbridge would be).
        let text = "syntax = \"proto3\";\npackage acme.stores.v1;\nimport \"google/type/weekday.proto\";\nmessage StoreClosed { string user_id = 1; }"
        let body = String(decoding: try JSONSerialization.data(withJSONObject: ["schemaType": "PROTOBUF", "schema": text]), as: UTF8.self)
        let unknownID = try #require(try await registry.request("POST", "/subjects/closed-value/versions", body: body).object?["id"] as? Int)
        let frame: [UInt8] = [0, 0, 0, UInt8(unknownID >> 8), UInt8(unknownID & 0xff), 0] + [0x0a, 0x02] + Array("u9".utf8)
        try await e.events.produce(records: [KafkaProducerRecord(topic: e.topic, value: frame)])
        let ids = try await SchemaProducer.produce(
            format: .protobuf, schema: SchemaProducer.fixture("protobuf/acme/stores/v1/stores.proto"), message: "acme.stores.v1.StoreOpened",
            records: SchemaProducer.fixture("records/store-opened.protobuf.jsonl"), topic: e.topic, brokers: e.bootstrapServers,
            registry: registry, protoPaths: [SchemaProducer.fixture("protobuf")])
        let id = try #require(ids.first)
        #expect(try await registry.request("GET", "/schemas/ids/\(id)").object?["references"] == nil, "registered without references")

        let worker = try await e.startWorker(group: "e2e-google-type", sections: "schema_registry: {url: \"\(registry.url)\"}")
        let emulator = e.emulator
        try #require(await eventually(timeout: .seconds(90)) { emulator.messages.count == 2 }, "\(worker.output.suffix(3000))")
        let args = Self.bodyArgs(emulator)
        #expect(args["u-3001"] == ["149", "EUR", "SUNDAY", "2.2945"])
        #expect(args["u-3002"] == ["-2", "USD", "MONDAY", "-0"])
        for (user, column) in [("u-3001", 0), ("u-3002", 1)] {
            let data = try #require(emulator.messages.first { $0.topic == user }?.message["data"], "\(user)")
            for field in Self.storeFields {
                let expected = column == 0 ? field.first : field.second
                #expect(data[Self.dataKey(field.pointer)]?.stringValue == expected, "\(user) \(field.pointer)")
            }
        }
        let dead = try await Self.deadLetters(e)
        #expect(dead.count == 1, "\(dead)")
        #expect(
            dead["invalid_schema"]?.contains("imports google/type/weekday.proto, which is neither among the schema's references nor built in") == true
        )
        #expect(worker.output.contains("google/type/weekday.proto"), "the log names the import")
        // Committed past all three: the dead-lettered record held nothing up.
        #expect(await eventually(timeout: .seconds(60)) { (try? await e.committed(group: "e2e-google-type"))?[0] == 3 })
        await expectCleanExit(worker)
        await registry.stop()
        await e.stop()
    }
}
