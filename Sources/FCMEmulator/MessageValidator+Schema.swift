import JSON

/// Each value read as its field's type in the discovery document (``DiscoverySchema``), by
/// protobuf.dev's "ProtoJSON Format" (the JSON mapping FCM's v1 API parses requests with), then
/// the rules the v1 reference states in words for some fields.
extension MessageValidator {
    /// A message of the table: an object whose every member is one of its fields.
    mutating func message(_ value: JSONValue, type: String, path: String) {
        guard case .object(let members) = value else {
            violate(path, "Invalid value: expected an object")
            return
        }
        let fields = DiscoverySchema.messages[type] ?? [:]
        var present: Set<String> = []
        for (key, member) in members {
            let name = Self.snake(key)
            guard let field = fields[name] else {
                // Unknown at any depth, null or not (ProtoJSON: "`null` is valid for any field", a
                // field of the message).
                unknown(path, key)
                continue
            }
            if member == .null { continue }  // ProtoJSON: null leaves the field unset
            present.insert(name)
            check(member, field, "\(path).\(name)")
            rules(member, type: type, name: name, path: "\(path).\(name)")
        }
        // The document marks these "Required." (LightSettings' color and both durations).
        for name in DiscoverySchema.required[type] ?? [] where !present.contains(name) {
            violate("\(path).\(name)", "Required field \"\(name)\" is not set")
        }
        messageRules(members, type: type, path: path)
    }

    /// A value against its field's type: a list of them when repeated.
    mutating func check(_ value: JSONValue, _ field: DiscoverySchema.Field, _ path: String) {
        guard field.repeated else {
            single(value, field.kind, path)
            return
        }
        guard case .array(let items) = value else {
            let what = field.kind == .string ? "an array of strings" : "an array"
            violate(path, "Invalid value: expected \(what), found \(value.typeName)")
            return
        }
        for (i, item) in items.enumerated() {
            if field.kind == .string {
                // The only repeated strings of Message are loc args. Null is refused inside lists
                // (ProtoJSON: "`null` values are not allowed within repeated fields").
                if case .string = item {} else { violate("\(path)[\(i)]", "Invalid value: loc args must be strings, found \(item.typeName)") }
            } else if item == .null {
                violate("\(path)[\(i)]", "Invalid value: null is not allowed in a list")
            } else {
                single(item, field.kind, "\(path)[\(i)]")
            }
        }
    }

    private mutating func single(_ value: JSONValue, _ kind: DiscoverySchema.Kind, _ path: String) {
        switch kind {
        case .string: string(value, path)
        case .bool: if case .bool = value {} else { violate(path, "Invalid value: expected a boolean, found \(value.typeName)") }
        case .int32:
            // ProtoJSON int32: "Either numbers or strings are accepted. Empty strings are invalid.
            // Exponent notation (such as 1e2) is also accepted in both quoted and unquoted forms."
            if !Self.isInt32(value) { violate(path, "Invalid value at '\(path)' (TYPE_INT32), \(Self.text(value))") }
        case .float:
            // ProtoJSON float: "JSON value will be a number or one of the special string values
            // "NaN", "Infinity", and "-Infinity". Either numbers or strings are accepted."
            if !Self.isFloat(value) { violate(path, "Invalid value at '\(path)' (TYPE_FLOAT), \(Self.text(value))") }
        case .duration:
            // ProtoJSON Duration: "Generated output always contains 0, 3, 6, or 9 fractional
            // digits … Accepted are any fractional digits (also none) as long as they fit into
            // nano-seconds precision and the suffix "s" is required"; ±315,576,000,000 s.
            if let s = string(value, path), Self.durationSeconds(s) == nil {
                violate(path, "Invalid duration \"\(s)\": expected seconds with an \"s\" suffix, e.g. \"3600s\"")
            }
        case .timestamp:
            // ProtoJSON Timestamp: RFC 3339, "Z-normalized … Offsets other than "Z" are also
            // accepted"; years 0001 to 9999, up to 9 fractional digits.
            if let s = string(value, path), !Self.isTimestamp(s) {
                violate(path, "Invalid value at '\(path)' (type.googleapis.com/google.protobuf.Timestamp), \(Self.text(value))")
            }
        case .enumeration(let names):
            // ProtoJSON enum: "The name of the enum value as specified in proto is used. Parsers
            // accept both enum names and integer values."
            if !Self.isEnumValue(value, names) {
                violate(path, "Invalid value \(Self.text(value)): expected one of \(names.sorted().joined(separator: ", "))")
            }
        case .stringMap:
            guard case .object(let members) = value else {
                violate(path, "Invalid value: expected a map of strings")
                return
            }
            for (key, member) in members {
                if case .string = member {} else { violate("\(path).\(key)", "Invalid value: map values must be strings, found \(member.typeName)") }
            }
        case .freeObject:
            // google.protobuf.Struct: any JSON object, but an object.
            if case .object = value {} else { violate(path, "Invalid value: expected an object") }
        case .message(let type): message(value, type: type, path: path)
        }
    }

    /// What the v1 reference says of some fields beyond their type.
    private mutating func rules(_ value: JSONValue, type: String, name: String, path: String) {
        switch (type, name) {
        case ("AndroidConfig", "ttl"), ("AndroidConfigV2", "ttl"):
            // "The maximum time to live supported is 4 weeks" (AndroidConfig.ttl); ErrorCode
            // INVALID_ARGUMENT lists "Invalid TTL".
            if case .string(let s) = value, let seconds = Self.durationSeconds(s) {
                if seconds > Self.maxTTLSeconds { violate(path, "TTL \(s) is longer than 4 weeks (2419200s)") }
                if seconds < 0 { violate(path, "TTL \(s) is negative") }
            }
        case ("AndroidNotification", "color"), ("AndroidNotificationV2", "color"):
            // "The notification's icon color, expressed in #rrggbb format."
            if case .string(let s) = value, !Self.isColor(s) { violate(path, "Invalid color \"\(s)\": expected #rrggbb") }
        case (_, "analytics_label"):
            // FcmOptions.analytics_label: "Label … must match the regular expression
            // ^[a-zA-Z0-9-_.~%]{1,50}$" (the v1 reference).
            if case .string(let s) = value, s.isEmpty || s.utf8.count > 50 || !s.utf8.allSatisfy(Self.isTopicByte) {
                violate(path, "analytics_label must match ^[a-zA-Z0-9-_.~%]{1,50}$")
            }
        case ("Message", "data"):
            guard case .object(let members) = value else { return }
            for (key, _) in members where Self.isReservedDataKey(key) {
                violate("\(path).\(key)", Self.reservedDataKeyProblem(key))
            }
        case ("ApnsConfig", "headers"): apnsHeaders(value, path)
        case ("ApnsConfig", "payload"): apnsPayload(value, path)
        case ("WebpushFcmOptions", "link"):
            // "The link to open when the user clicks on the notification. For all URL values,
            // HTTPS is required" (WebpushFcmOptions.link); firebase-admin-go's
            // validateWebpushConfig refuses another scheme: "fcm options link must be an HTTPS URL".
            if case .string(let s) = value, !Self.isHTTPSURL(s) { violate(path, "fcm options link must be an HTTPS URL") }
        default: break
        }
    }

    /// Rules across a message's fields.
    private mutating func messageRules(_ members: [(key: String, value: JSONValue)], type: String, path: String) {
        switch type {
        case "Message":
            // Message.androidV2 (discovery revision 20261023): "Mutually exclusive with `android`.
            // Requests with both `AndroidConfig` and `AndroidConfigV2` will be rejected."
            let set = Set(members.filter { $0.value != .null }.map { Self.snake($0.key) })
            if set.contains("android") && set.contains("android_v2") {
                violate(
                    path,
                    "Message.android and Message.android_v2 are mutually exclusive: requests with both AndroidConfig and AndroidConfigV2 are rejected"
                )
            }
        case "AndroidNotification", "AndroidNotificationV2":
            // body_loc_args: "Variable string values to be used in place of the format specifiers
            // in body_loc_key"; FCM refuses them without it.
            let keys = Set(members.filter { $0.value != .null }.map { Self.snake($0.key) })
            for (args, key) in [("body_loc_args", "body_loc_key"), ("title_loc_args", "title_loc_key")]
            where keys.contains(args) && !keys.contains(key) {
                violate("\(path).\(args)", "\(args) requires \(key)")
            }
        default: break
        }
    }

    @discardableResult
    mutating func string(_ value: JSONValue, _ path: String) -> String? {
        guard case .string(let s) = value else {
            violate(path, "Invalid value: expected a string, found \(value.typeName)")
            return nil
        }
        return s
    }

    static func text(_ value: JSONValue) -> String {
        String(decoding: JSONWriter.write(value), as: UTF8.self)
    }
}
