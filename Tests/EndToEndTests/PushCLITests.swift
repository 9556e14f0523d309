import Foundation
import TestSupport
import Testing

/// examples/mappings/marketplace.yaml's two pushes through the commands that show them.
@Suite("pushbridge render / preview / validate with several pushes", .serialized)
struct PushCLITests {
    @Test("render names each body's push on standard error; preview lists the pushes and both texts; validate the pushes")
    func pushes() async throws {
        let render = try await runPushbridge(["render", "--mappings", "examples/mappings", "--event", "examples/events/order-paid.json"])
        #expect(render.status == 0, "\(render.err)")
        #expect(render.err == "push: buyer\npush: seller\n")
        #expect(render.out.split(separator: "\n").count == 2 && render.out.contains(#""tag":"evt-5001:seller""#))
        let preview = try await runPushbridge(
            ["preview", "--mappings", "examples/mappings", "--event", "examples/events/order-paid.json", "--locale", "en"]
                + VariantCLITests.resources)
        #expect(preview.status == 0, "\(preview.err)")
        #expect(
            preview.out.hasPrefix("order.paid (examples/mappings/marketplace.yaml:12): 2 messages\npush buyer: 1 message\npush seller: 1 message\n"))
        #expect(preview.out.contains("| Payment received for order #1077.") && preview.out.contains("| Alice bought order #1077."))
        let validate = try await runPushbridge(["validate", "examples/mappings"])
        #expect(validate.out.contains("  order.paid: pushes buyer, seller (when /seller/notify_sales = \"true\")\n"), "\(validate.out)")
    }
}
