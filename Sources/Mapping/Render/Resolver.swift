import Dates

/// Resolves value sources against one event.
struct Resolver {
    let event: DecodedEvent
    /// Seconds since the Unix epoch, for `apns-expiration`; nil: read the clock when needed.
    let now: Int64?
    /// `ttl: remaining`'s seconds for this event (``EventAge``).
    var remainingTTL: Int? = nil
    /// Set while compiling a template: values from the event become holes.
    var recorder: HoleRecorder? = nil
    /// Read for ``nowSeconds`` when ``now`` is nil.
    var clock: any WallClock = SystemWallClock()

    func fieldName(_ source: ValueSource) -> String {
        switch source {
        case .field(let p, _): p.description
        case .eventID: "event id"
        case .pushID: "push id"
        case .digest(let v): "digest \(v.rawValue)"
        case .literal: "literal"
        }
    }

    func string(_ source: ValueSource, role: String) throws(MappingFailure) -> String {
        if let recorder, !source.isLiteral { return recorder.hole(source, role: role, kind: .string) }
        switch source {
        case .literal(let s): return s
        case .eventID: return event.id
        case .pushID(let push): return "\(event.id):\(push)"
        // The loader allows it only in a digest's `many`, rendered with the window's summary.
        case .digest(let v): return event.digest?.text(v) ?? ""
        case .field(let pointer, let fallback):
            let value = pointer.resolve(in: event.data) ?? .null
            if case .null = value {
                guard let fallback else { throw .missingField(field: pointer.description, role: role) }
                return fallback
            }
            guard let s = Stringify.scalar(value) else {
                throw .wrongType(field: pointer.description, expected: "a string, number or boolean", found: value.typeName)
            }
            return s
        }
    }

    /// Writes what ``string(_:role:)`` returns as a JSON string, without making a String for
    /// the common cases.
    func writeString(_ source: ValueSource, role: String, into out: inout [UInt8]) throws(MappingFailure) {
        if case .field(let pointer, _) = source {
            switch pointer.resolve(in: event.data) {
            case .string(let s)?:
                JSONWriter.writeString(s, into: &out)
                return
            case .int(let i)?:
                out.append(UInt8(ascii: "\""))
                JSONWriter.writeInteger(i, into: &out)
                out.append(UInt8(ascii: "\""))
                return
            default: break
            }
        }
        JSONWriter.writeString(try string(source, role: role), into: &out)
    }

    func args(_ sources: [ValueSource], role: String) throws(MappingFailure) -> JSONValue {
        var out: [JSONValue] = []
        out.reserveCapacity(sources.count)
        for (i, s) in sources.enumerated() { out.append(.string(try string(s, role: "\(role) arg \(i + 1)"))) }
        return .array(out)
    }

    /// A count of at least 0 (a badge, a notification count), or its hole while compiling a
    /// template.
    func countValue(_ source: ValueSource, role: String) throws(MappingFailure) -> JSONValue {
        if let recorder, !source.isLiteral { return .string(recorder.hole(source, role: role, kind: .count)) }
        return .int(try count(source, role: role))
    }

    func count(_ source: ValueSource, role: String) throws(MappingFailure) -> Int64 {
        let n = try integer(source, role: role)
        guard n >= 0 else { throw .invalidValue(field: fieldName(source), reason: "\(role) \(n) is below 0") }
        return n
    }

    /// The message's target value, checked for its kind: a device identifier is a non-empty
    /// JSON string (never a number or a boolean turned into one); a topic a valid name (a
    /// leading `/topics/` removed); a condition a valid condition.
    func target(_ source: ValueSource, kind: MessageTarget.Kind) throws(MappingFailure) -> String {
        let role = kind.role
        if let recorder, !source.isLiteral { return recorder.hole(source, role: role, kind: .target(kind)) }
        switch kind {
        case .fid, .token:
            if case .field(let pointer, let fallback) = source {
                let value = pointer.resolve(in: event.data) ?? .null
                if case .null = value {
                    guard let fallback, !fallback.isEmpty else { throw .missingField(field: pointer.description, role: role) }
                    return fallback
                }
                guard case .string(let id) = value else {
                    throw .wrongType(field: pointer.description, expected: "a non-empty string (\(kind.rawValue))", found: value.typeName)
                }
                guard !id.isEmpty else { throw .noTargets("\(pointer) is an empty string") }
                return id
            }
            let id = try string(source, role: role)
            guard !id.isEmpty else { throw .noTargets("the \(kind.rawValue) from \(fieldName(source)) is empty") }
            return id
        case .topic:
            var topic = try string(source, role: role)
            if topic.hasPrefix("/topics/") { topic.removeFirst("/topics/".count) }
            if let problem = TopicName.problem(topic) { throw .invalidValue(field: fieldName(source), reason: problem) }
            return topic
        case .condition:
            let condition = try string(source, role: role)
            do {
                _ = try TopicCondition.check(condition)
            } catch {
                throw .invalidValue(field: fieldName(source), reason: "not a topic condition FCM accepts: \(error)")
            }
            return condition
        }
    }

    /// The shared image URL, checked to be an absolute https:// URL.
    func imageURL(_ source: ValueSource) throws(MappingFailure) -> String { try httpsURL(source, role: "image") }

    /// A URL (an image, an icon, a link), checked to be an absolute https:// URL.
    func httpsURL(_ source: ValueSource, role: String) throws(MappingFailure) -> String {
        if let recorder, !source.isLiteral { return recorder.hole(source, role: role, kind: .httpsURL) }
        let value = try string(source, role: role)
        guard EventMapping.isHTTPSURL(value) else { throw .invalidValue(field: fieldName(source), reason: "\"\(value)\" is not an https:// URL") }
        return value
    }

    /// A time from an event field (an RFC 3339 string, or an epoch number in `unit`), written
    /// as RFC 3339 in UTC with milliseconds: a protobuf Timestamp as FCM reads one.
    func timestamp(_ pointer: JSONPointer, unit: MaxAge.EpochUnit, role: String) throws(MappingFailure) -> String {
        let source = ValueSource.field(pointer, default: nil)
        if let recorder { return recorder.hole(source, role: role, kind: .timestamp(unit)) }
        return RFC3339.format(milliseconds: try EventAge.fieldTime(in: event.data, at: pointer, unit: unit, role: role))
    }

    /// A web push `Topic` header, checked (RFC 8030 §5.4).
    func webTopic(_ source: ValueSource) throws(MappingFailure) -> String {
        if let recorder, !source.isLiteral { return recorder.hole(source, role: "web.topic", kind: .webTopic) }
        let topic = try string(source, role: "web.topic")
        if let problem = WebTopic.problem(topic) { throw .invalidValue(field: fieldName(source), reason: "web.topic: \(problem)") }
        return topic
    }

    /// A web push's `TTL` header, in seconds; for `ttl: remaining`, a hole while compiling.
    func webTTL(_ ttl: EventMapping.TTL) -> String {
        switch ttl {
        case .seconds(let seconds): return String(seconds)
        case .remaining:
            if let recorder { return recorder.clockHole(.remainingSeconds) }
            return String(remaining)
        }
    }

    /// A `#rrggbb` colour, checked.
    func color(_ source: ValueSource) throws(MappingFailure) -> String {
        if let recorder, !source.isLiteral { return recorder.hole(source, role: "android.color", kind: .color) }
        let value = try string(source, role: "android.color")
        guard EventMapping.isColor(value) else { throw .invalidValue(field: fieldName(source), reason: "\"\(value)\" is not a #rrggbb color") }
        return value
    }

    /// A collapse key or replace ID. When it becomes `apns-collapse-id`, an HTTP/2 header of
    /// APNs, it must fit in 64 bytes and be a valid header value.
    func collapseID(_ source: ValueSource, role: String, forAPNs: Bool) throws(MappingFailure) -> String {
        if let recorder, !source.isLiteral { return recorder.hole(source, role: role, kind: .collapseID(forAPNs: forAPNs)) }
        let id = try string(source, role: role)
        guard forAPNs else { return id }
        if id.utf8.count > FCMLimits.apnsCollapseIDBytes {
            throw .invalidValue(
                field: fieldName(source), reason: "\(role) is \(id.utf8.count) bytes; apns-collapse-id allows \(FCMLimits.apnsCollapseIDBytes)")
        }
        if let problem = HeaderValue.problem(id) {
            throw .invalidValue(field: fieldName(source), reason: "\(role) cannot be the apns-collapse-id header: \(problem)")
        }
        return id
    }

    /// The time of sending: the one given, else the clock's (most mappings never ask).
    var nowSeconds: Int64 { now ?? clock.nowMilliseconds() / 1000 }

    /// The seconds of `ttl: remaining` (0 if nothing said: deliver now or never).
    var remaining: Int { remainingTTL ?? 0 }

    /// Android's `ttl`, `3600s`; for `ttl: remaining`, a hole while compiling a template.
    func androidTTL(_ ttl: EventMapping.TTL) -> String {
        switch ttl {
        case .seconds(let seconds): return "\(seconds)s"
        case .remaining:
            if let recorder { return recorder.clockHole(.remainingTTL) }
            return "\(remaining)s"
        }
    }

    /// `apns-expiration` for a TTL: `0` stays 0 (deliver now or never); otherwise now + TTL, in
    /// seconds since the epoch.
    func expiration(_ ttl: EventMapping.TTL) -> String {
        switch ttl {
        case .seconds(let seconds):
            if seconds == 0 { return "0" }
            if let recorder { return recorder.clockHole(.expiration(ttl: seconds)) }
            return String(nowSeconds + Int64(seconds))
        case .remaining:
            if let recorder { return recorder.clockHole(.remainingExpiration) }
            return remaining == 0 ? "0" : String(nowSeconds + Int64(remaining))
        }
    }

    func integer(_ source: ValueSource, role: String) throws(MappingFailure) -> Int64 {
        if case .field(let pointer, _) = source, case .int(let i)? = pointer.resolve(in: event.data) { return i }
        let text = try string(source, role: role)
        guard let i = Int64(text) else { throw .wrongType(field: fieldName(source), expected: "integer", found: "\"\(text)\"") }
        return i
    }

    func devices(_ source: DeviceListSource, kind: MessageTarget.Kind) throws(MappingFailure) -> [String] {
        switch source {
        case .literal(let list): return list
        case .field(let pointer):
            let role = kind.listRole
            guard let value = pointer.resolve(in: event.data) else { throw .missingField(field: pointer.description, role: role) }
            guard case .array(let items) = value else {
                throw .wrongType(field: pointer.description, expected: "array of strings", found: value.typeName)
            }
            var ids: [String] = []
            for item in items {
                guard case .string(let id) = item, !id.isEmpty else {
                    throw .wrongType(
                        field: pointer.description, expected: "array of non-empty strings", found: "an array containing \(item.typeName)")
                }
                ids.append(id)
            }
            guard !ids.isEmpty else { throw .noTargets("\(pointer) is an empty list") }
            return ids
        }
    }
}

/// What HTTP/2 allows in a header value (RFC 9113 §8.2.1): FCM passes `apns.headers` to APNs as
/// HTTP/2 headers.
enum HeaderValue {
    static func problem(_ value: String) -> String? {
        var value = value
        return value.withUTF8 { bytes in  // contiguous: a byte loop, not String.UTF8View's indexing
            if bytes.contains(where: { $0 == 0x00 || $0 == 0x0A || $0 == 0x0D }) { return "it contains a NUL, CR or LF" }
            if let first = bytes.first, first == 0x20 || first == 0x09 { return "it starts with whitespace" }
            if let last = bytes.last, last == 0x20 || last == 0x09 { return "it ends with whitespace" }
            return nil
        }
    }
}

extension MessageTarget.Kind {
    /// What a failure names the target by: literals, so the hot path allocates no string.
    var role: String {
        switch self {
        case .fid: "target fid"
        case .token: "target token"
        case .topic: "target topic"
        case .condition: "target condition"
        }
    }

    /// The same for a fan-out list.
    var listRole: String { self == .fid ? "target fids" : "target tokens" }
}
