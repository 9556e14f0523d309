import Localization
import Mapping
import MappingLocalization
import Testing

/// What lint reads from an event type with variants: every variant's keys, each at the variant's
/// line, the base's merged into each.
@Suite("lint: the keys of every variant")
struct VariantKeyUsesTests {
    @Test("each variant's title and body keys, with their arg counts, at the variant's line")
    func everyVariant() throws {
        let set = try MappingSet.load(files: [
            (
                "m.yaml",
                """
                version: 1
                events:
                  order.status_changed:
                    target: {token: t}
                    title: {key: order_title}
                    variants:
                      - when: {field: /status, equals: shipped}
                        body: {key: shipped_body, args: [{field: /n}, {field: /carrier}]}
                      - when: {field: /status, equals: delivered}
                        title: {key: delivered_title}
                        body: {key: delivered_body, args: [{field: /n}]}
                        platforms: [android]
                    unmatched: skip
                """
            )
        ])
        let uses = LocKeyUses.uses(set).map { "\($0.platform) \($0.key) \($0.argumentCount) :\($0.location.line)" }
        #expect(
            uses == [
                "android order_title 0 :7", "ios ORDER_TITLE 0 :7", "android shipped_body 2 :7", "ios SHIPPED_BODY 2 :7",
                "android delivered_title 0 :9", "android delivered_body 1 :9",
            ])
    }
}
