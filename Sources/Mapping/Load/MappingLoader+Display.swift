import Yams

// `image`, `interruption` and `relevance` (docs/mapping.md, *Images, interruption levels and
// relevance*): how the notification looks and how it breaks through, checked at load.
extension MappingLoader {
    mutating func loadDisplay(_ m: Node.Mapping, into mapping: inout EventMapping) {
        if let n = m["image"], let s = source(n, "image") {
            // FCM fetches the image over HTTPS ("For all URL values, HTTPS is required": the
            // discovery document, revision 20261023); an event's URL is checked per event.
            if case .literal(let url) = s, !EventMapping.isHTTPSURL(url) {
                fail(n, "image \"\(url)\" is not an https:// URL", hint: "FCM and the phones fetch notification images over HTTPS only")
            }
            if m["android"]?.mapping?["image"] != nil {
                fail(n, "`image` and `android.image` are both given", hint: "`image` sets Android's and iOS's; keep one")
            }
            mapping.image = s
        }
        if let n = m["interruption"] {
            let names = EventMapping.InterruptionLevel.allCases.map(\.rawValue)
            if let level = n.scalar.flatMap({ EventMapping.InterruptionLevel(rawValue: $0.string) }) {
                mapping.interruption = level
                if level == .critical {
                    warn(
                        n, "a critical alert needs Apple's Critical Alerts entitlement in the app",
                        hint: "without it, use time-sensitive: it breaks through Focus when the user allows it")
                }
            } else {
                fail(
                    n, "interruption must be one of \(names.joined(separator: ", "))",
                    hint: "Apple's interruption levels (UNNotificationInterruptionLevel)")
            }
        }
        if let n = m["badge"] { mapping.badge = count(n, "badge") }
        if let n = m["relevance"] {
            if let text = n.scalar?.string, let score = Double(text), score >= 0, score <= 1 {
                mapping.relevance = score
            } else {
                fail(n, "relevance must be a number from 0 to 1", hint: "iOS ranks a summary's notifications by it: 1 the most relevant")
            }
        }
    }
}

extension EventMapping {
    /// An absolute `https://` URL with a host.
    static func isHTTPSURL(_ s: String) -> Bool {
        s.hasPrefix("https://") && s.utf8.count > 8 && !s.utf8.contains(where: { $0 <= 0x20 })
    }
}
