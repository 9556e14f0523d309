import Foundation
import JSON
import Logging
import RecordDecoding
import TestSupport
import Testing

@testable import SchemaRegistry

/// Records using each of Google's common types (`google/type/*`), made by confluent-kafka's own
/// ProtobufSerializer with its default settings, which registers their schema without references
/// (`_is_builtin` skips `google/type/`): fetched from the registry emulator by the client and
/// decoded, each google/type message as the message it is (docs/mapping.md).
@Suite("google/type records from confluent-kafka's ProtobufSerializer", .serialized)
struct GoogleTypeRecordsTests {
    /// Decoded as the mapping sees it, written with sorted keys (so numbers print as they
    /// stringify: `-0.0` as `-0`, `1.0` as `1`).
    static let expected = [
        #"""
        {"access_rule":{"description":"","expression":"age >= 18","location":"","title":"Adults"},
         "address":{"address_lines":["5 Avenue Anatole France","Champ de Mars"],"administrative_area":"","language_code":"",
          "locality":"Paris","organization":"","postal_code":"75007","recipients":["Acme"],"region_code":"FR","revision":0,
          "sorting_code":"","sublocality":""},
         "brand_color":{"alpha":0.8,"blue":0.25,"green":0.5,"red":1},
         "closed_on":"SUNDAY",
         "entry_fee":{"currency_code":"EUR","nanos":900000000,"units":149},
         "grand_opening":{"day":14,"hours":18,"minutes":30,"month":3,"nanos":0,"seconds":0,"utc_offset":"3600s","year":2026},
         "greeting":{"language_code":"fr","text":"Bienvenue"},
         "hotline":{"number":"3949","region_code":"FR"},
         "location":{"latitude":48.8584,"longitude":2.2945},
         "opening_date":{"day":14,"month":3,"year":2026},
         "opening_week":{"end_time":"2026-03-21T18:00:00.500Z","start_time":"2026-03-14T09:00:00Z"},
         "opens_at":{"hours":9,"minutes":30,"nanos":0,"seconds":0},
         "peak_month":"DECEMBER",
         "phone":{"e164_number":"+33123456789","extension":"12"},
         "rating":{"value":"4.50"},
         "report_period":"WEEK",
         "share":{"denominator":3,"numerator":1},
         "sign_orientation":{"w":-0.25,"x":0.5,"y":-0.0,"z":0.7071},
         "store_id":"S-1","user_id":"u-3001",
         "zone":{"id":"Europe/Paris","version":"2025b"}}
        """#,
        // Unset: messages missing, scalars and enums their defaults; the other oneof members.
        #"""
        {"brand_color":{"blue":0,"green":0,"red":0.1},
         "closed_on":"MONDAY",
         "entry_fee":{"currency_code":"USD","nanos":-500000000,"units":-2},
         "grand_opening":{"day":31,"hours":23,"minutes":59,"month":12,"nanos":5000000,"seconds":59,
          "time_zone":{"id":"America/New_York","version":""},"year":2026},
         "location":{"latitude":-33.8568,"longitude":-0.0},
         "peak_month":"MONTH_UNSPECIFIED",
         "phone":{"extension":"","short_code":{"number":"911","region_code":"US"}},
         "report_period":"CALENDAR_PERIOD_UNSPECIFIED",
         "store_id":"S-2","user_id":"u-3002"}
        """#,
    ]

    static func client(_ registry: SchemaRegistryServer) throws -> SchemaRegistryClient {
        try SchemaRegistryClient(configuration: .init(url: registry.url), logger: Logger(label: "test"))
    }

    @Test("every google/type message and enum decodes from the serializer's records, registered without references")
    func decodeAsMessages() async throws {
        let registry = try await SchemaRegistryServer.start()
        let produced = try await SchemaProducer.serialize(
            format: .protobuf, schema: SchemaProducer.fixture("protobuf/acme/stores/v1/stores.proto"), message: "acme.stores.v1.StoreOpened",
            records: SchemaProducer.fixture("records/store-opened.protobuf.jsonl"), registry: registry,
            protoPaths: [SchemaProducer.fixture("protobuf")])
        let id = try #require(produced.schemaIDs.first)
        let registered = try await registry.request("GET", "/schemas/ids/\(id)")
        #expect(registered.status == 200 && registered.object?["references"] == nil, "no references: \(registered.body)")

        let client = try Self.client(registry)
        let schema = try await client.schema(id: UInt32(id))
        try #require(produced.values.count == Self.expected.count)
        for (value, expected) in zip(produced.values, Self.expected) {
            let frame = try #require(ConfluentFrame(value))
            let (decoded, name) = try schema.decode(value, frame: frame, keeping: .all)
            #expect(name == "acme.stores.v1.StoreOpened")
            let text = JSONWriter.string(decoded)
            #expect(text == JSONWriter.string(try JSONParser.parse(Array(expected.utf8))), "\(text)")
        }
        await client.shutdown()
        await registry.stop()
    }

    /// An import the serializer skipped and pushbridge does not build in: the schema cannot be
    /// read (its records are dead-lettered as invalid_schema), the error names the import, and
    /// it is asked for once, not retried as an outage is.
    @Test("a schema importing a google/type file pushbridge lacks is invalid, naming the import, asked for once")
    func unknownImport() async throws {
        let registry = try await SchemaRegistryServer.start()
        let text = "syntax = \"proto3\";\npackage acme;\nimport \"google/type/weekday.proto\";\nmessage M { string a = 1; }"
        let body = String(decoding: try JSONSerialization.data(withJSONObject: ["schemaType": "PROTOBUF", "schema": text]), as: UTF8.self)
        let registered = try await registry.request("POST", "/subjects/m-value/versions", body: body)
        let id = UInt32(try #require(registered.object?["id"] as? Int, "\(registered.body)"))
        try await registry.clearRequests()
        let client = try Self.client(registry)
        await #expect {
            _ = try await client.schema(id: id)
        } throws: { error in
            guard case .invalid(id, let why)? = error as? SchemaLookupError else { return false }
            return why.description.contains("imports google/type/weekday.proto, which is neither among the schema's references nor built in")
        }
        #expect(try await registry.requests().count { $0.hasPrefix("GET /schemas/ids/") } == 1)
        await client.shutdown()
        await registry.stop()
    }
}
