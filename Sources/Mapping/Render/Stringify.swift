/// The documented rule that turns event values into FCM's string-only loc args and data values:
///
/// | JSON value | becomes |
/// |---|---|
/// | string | itself |
/// | integer (`3`, `-12`, `12345678901234567890`) | its decimal form, every digit kept: `"3"` |
/// | number with a fraction or exponent (`11.8`, `2.50`, `1e3`) | the shortest decimal that reads back as the same double: `"11.8"`, `"2.5"`, `"1000"`; `-0.0` keeps its sign, `"-0"` |
/// | `true` / `false` | `"true"` / `"false"` |
/// | null or missing | the source's `default`; without one, the event fails naming the field |
/// | array or object | the event fails (wrong type) |
///
/// A number's original spelling is not kept (`11.80` becomes `"11.8"`): send a string when the
/// exact text matters, e.g. prices.
public enum Stringify {
    /// nil for null, arrays and objects.
    public static func scalar(_ value: JSONValue) -> String? {
        switch value {
        case .string(let s): s
        case .int(let i): String(i)
        case .bigInteger(let text): text
        case .double(let d): number(d)
        case .bool(let b): b ? "true" : "false"
        case .null, .array, .object: nil
        }
    }

    /// Shortest round-trip decimal; integral values below 2^53 without a fraction part.
    public static func number(_ d: Double) -> String {
        JSONWriter.shortest(d)
    }
}
