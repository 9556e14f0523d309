import Foundation
import TestSupport
import Testing

/// examples/mappings/orders.yaml's variants through the commands that show them: which variant
/// an event takes and why (render, preview), the variants of each event type (validate).
@Suite("pushbridge render / preview / validate with variants", .serialized)
struct VariantCLITests {
    static let resources = ["--android-res", "examples/resources/android/res", "--ios", "examples/resources/ios"]

    @Test("render says on standard error which variant it took and why; the bodies stay alone on standard output")
    func render() async throws {
        let r = try await runPushbridge(["render", "--mappings", "examples/mappings", "--event", "examples/events/order-status-delivered.json"])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.err == "variant: delivered_with_photo (/status = \"delivered\" and /proof_photo_url present)\n")
        #expect(r.out.hasPrefix(#"{"message":{"#) && r.out.contains(#""image":"https://cdn.example.com/proof/o-78.jpg""#))
    }

    @Test("render of an event no variant takes: says so, with the code, and exits 2")
    func unmatched() async throws {
        let r = try await runPushbridge(["render", "--mappings", "examples/mappings", "--event", "examples/events/order-status-returned.json"])
        #expect(r.status == 2 && r.out.isEmpty)
        #expect(
            r.err
                == "no variant matched: skipped\ncannot render: no variant of event type \"order.status_changed\" matches the event [no_variant]\n")
    }

    @Test("preview prints the variant under its heading, with the variant's file:line")
    func preview() async throws {
        let r = try await runPushbridge(
            ["preview", "--mappings", "examples/mappings", "--event", "examples/events/order-status-nearby.json", "--locale", "en"] + Self.resources)
        #expect(r.status == 0, "\(r.err)")
        #expect(
            r.out.hasPrefix(
                "order.status_changed (examples/mappings/orders.yaml:18): 1 message\nvariant: out_for_delivery (/status in [\"out_for_delivery\", \"nearby\"])\n"
            ), "\(r.out)")
        #expect(r.out.contains("| Arriving in about 10 min."))
    }

    @Test("validate lists each event type's variants in order, and what becomes of an event none takes")
    func validate() async throws {
        let r = try await runPushbridge(["validate", "examples/mappings"])
        #expect(r.status == 0, "\(r.err)")
        #expect(
            r.out.contains(
                #"  order.status_changed: variants shipped (/status = "shipped"), out_for_delivery (/status in ["out_for_delivery", "nearby"]), delivered_with_photo (/status = "delivered" and /proof_photo_url present), delivered (/status = "delivered"); else skipped"#
            ), "\(r.out)")
    }

    @Test("validate: a variant with a max_age of its own is listed by name; an overlap warns with both lines")
    func validateOwnMaxAge() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pb-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("v.yaml").path
        try """
        version: 1
        events:
          e:
            target: {token: t}
            body: {key: k}
            max_age: 1h
            variants:
              - name: fast
                when: {field: /s, equals: a}
                max_age: 5m
              - when: {field: /express, equals: true}
              - default: true
        """.write(toFile: file, atomically: true, encoding: .utf8)
        let r = try await runPushbridge(["validate", file])
        #expect(r.status == 0, "\(r.err)")
        #expect(
            r.out.hasSuffix(
                """
                  e: variants fast (/s = "a"), #2 (/express = "true"), default
                  e (variant fast): sent only within 5m of the Kafka timestamp; older: skipped; ttl: FCM's default
                  e (variant #2): sent only within 1h of the Kafka timestamp; older: skipped; ttl: FCM's default
                  e (variant #3): sent only within 1h of the Kafka timestamp; older: skipped; ttl: FCM's default

                """), "\(r.out)")
        #expect(
            r.err.contains("\(file):11:9: warning: variants \"fast\" (line 8) and \"#2\" can both match an event; \"fast\" is chosen"), "\(r.err)")
    }
}
