/// FCM HTTP v1's `Message` as Google's discovery document for the API states it: the table in
/// FCMSchema.generated.swift, which scripts/fcm-schema.py writes from `fcm.v1.json` in a pinned
/// google-api-python-client wheel (revision and hashes in that file's header). The loader checks
/// the `fcm:` overlay against it (docs/mapping.md, *Any other FCM field*), so a field FCM adds
/// reaches mappings by regenerating.
///
/// The emulator has the same table as a type of its own (`DiscoverySchema`): it shares no code
/// with the mapping core (docs/emulator.md). Field names are the proto (snake_case) names; FCM's
/// JSON parser also takes the lowerCamelCase ones (protobuf.dev, "ProtoJSON Format").
enum FCMSchema {
    /// A field's type, from the discovery document's `type`, `format`, `enum`, `$ref` and
    /// `additionalProperties`.
    enum Kind: Equatable, Sendable {
        /// `type: string`
        case string
        /// `type: boolean`
        case bool
        /// `type: integer, format: int32`
        case int32
        /// `type: number, format: float`
        case float
        /// `type: string, format: google-duration` (google.protobuf.Duration)
        case duration
        /// `type: string, format: google-datetime` (google.protobuf.Timestamp)
        case timestamp
        /// `type: string` with `enum`: the values in the document's order.
        case enumeration([String])
        /// `type: object, additionalProperties: {type: string}` (map<string, string>)
        case stringMap
        /// `type: object, additionalProperties: {type: any}`: free JSON (google.protobuf.Struct).
        case freeObject
        /// `$ref`: a message of the table.
        case message(String)
    }

    struct Field: Equatable, Sendable {
        var kind: Kind
        /// `type: array` of `kind`.
        var repeated: Bool
        /// `deprecated: true`.
        var deprecated: Bool
        /// The description starts "Output Only".
        var outputOnly: Bool
        /// The description starts "Required.".
        var required: Bool

        init(_ kind: Kind, repeated: Bool = false, deprecated: Bool = false, outputOnly: Bool = false, required: Bool = false) {
            self.kind = kind
            self.repeated = repeated
            self.deprecated = deprecated
            self.outputOnly = outputOnly
            self.required = required
        }
    }

    /// A field that holds a value rather than a nested message: a scalar, a repeated scalar, a
    /// map, free JSON, or a message without fields (whose presence is its value).
    struct Leaf: Equatable, Sendable {
        /// Dotted proto names from `Message`: `android.notification.event_time`.
        var path: String
        var field: Field
    }

    /// The leaves under `message`, sorted by path.
    static func leaves(of message: String = "Message", prefix: String = "") -> [Leaf] {
        var out: [Leaf] = []
        for (name, field) in (messages[message] ?? [:]).sorted(by: { $0.key < $1.key }) {
            let path = prefix + name
            if case .message(let type) = field.kind, let fields = messages[type], !fields.isEmpty {
                out += leaves(of: type, prefix: path + ".")
            } else {
                out.append(Leaf(path: path, field: field))
            }
        }
        return out
    }

    /// The proto name of a JSON name: `lightSettings` → `light_settings`, as FCM's parser reads
    /// either.
    static func protoName(_ name: String) -> String {
        var out = ""
        for c in name {
            if c.isUppercase, c.isASCII {
                out += "_" + c.lowercased()
            } else {
                out.append(c)
            }
        }
        return out
    }
}
