import JSON

/// Why a registry record was not understood. The record is skipped; its offset still counts.
public struct RegistryRecordError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, in words for a log line (no device IDs: they are personal data).
    public var reason: String

    public init(_ reason: String) { self.reason = reason }

    public var description: String { reason }
}

/// The registry topic's record format (docs/registry.md, schemas/registry-record.schema.json).
///
/// Key: the user ID (UTF-8). Value: `{"devices": [{"token": "…", "platform": "android", "app":
/// "consumer", "labels": {"lang": "de"}, "muted": ["marketing"]}, {"fid": "…"}, {"token": "…",
/// "platform": "ios", "push_to_start": {"DeliveryAttributes": "…"}}], "time_zone":
/// "Europe/Berlin", "muted": ["social"], "quiet_hours": {"from": "22:00", "to": "07:30"}}`; a null
/// value is a tombstone. An empty
/// value is read as a tombstone too (the consumer does not tell null from empty). Members the
/// format does not define are ignored, so producers may add their own; a device listed twice
/// (same ID) counts once. A preference member with a value the format does not allow is left
/// out (``RegistryUpdate/droppedPreferences``) and the rest of the record applies: a typo in a
/// zone name must not stop the user's device updates.
public enum RegistryRecord {
    /// Parses one record. Never traps: anything it cannot use is a failure with its reason.
    public static func parse(key: [UInt8]?, value: [UInt8]?) -> Result<RegistryUpdate, RegistryRecordError> {
        guard let key, !key.isEmpty else { return .failure(.init("the record has no key (the user ID)")) }
        guard let user = String(validating: key, as: UTF8.self) else {
            return .failure(.init("the key (the user ID) is not UTF-8"))
        }
        guard let value, !value.isEmpty else { return .success(RegistryUpdate(user: user, devices: nil)) }
        let document: JSONValue
        do {
            document = try JSONParser.parse(value)
        } catch {
            return .failure(.init("the value is not JSON: \(error)"))
        }
        do {
            var dropped: [String] = []
            let devices = try devices(in: document, dropped: &dropped)
            if dropped.contains("devices[].muted") {  // once per record, however many devices
                dropped.removeAll { $0 == "devices[].muted" }
                dropped.append("devices[].muted")
            }
            let preferences = preferences(in: document, dropped: &dropped)
            return .success(RegistryUpdate(user: user, devices: devices, preferences: preferences, droppedPreferences: dropped))
        } catch {
            return .failure(error)
        }
    }

    static func devices(in document: JSONValue, dropped: inout [String]) throws(RegistryRecordError) -> [RegisteredDevice] {
        guard case .object = document else { throw .init("the value is a JSON \(document.typeName), not an object") }
        guard let list = document["devices"] else { throw .init("the value has no \"devices\" member") }
        guard case .array(let items) = list else { throw .init("\"devices\" is a \(list.typeName), not an array") }
        var devices: [RegisteredDevice] = []
        devices.reserveCapacity(items.count)
        var seen = Set<String>()
        for (i, item) in items.enumerated() {
            var device = try self.device(item, at: i)
            if let muted = categories(item["muted"]) {
                device.muted = muted
            } else {
                dropped.append("devices[].muted")
            }
            if seen.insert(device.id).inserted { devices.append(device) }
        }
        return devices
    }

    private static func device(_ item: JSONValue, at i: Int) throws(RegistryRecordError) -> RegisteredDevice {
        let at = "devices[\(i)]"
        guard case .object = item else { throw .init("\(at) is a \(item.typeName), not an object") }
        let fid = try string(item, "fid", at: at)
        let token = try string(item, "token", at: at)
        let kind: RegisteredDevice.Kind
        let id: String
        switch (fid, token) {
        case (let f?, nil): (kind, id) = (.fid, f)
        case (nil, let t?): (kind, id) = (.token, t)
        case (nil, nil): throw .init("\(at) has neither \"fid\" nor \"token\"")
        case (.some, .some): throw .init("\(at) has both \"fid\" and \"token\"; give one")
        }
        let platform = try string(item, "platform", at: at)
        if let platform, !RegisteredDevice.platforms.contains(platform) {
            throw .init("\(at).platform is \"\(platform.prefix(40))\"; expected android, ios or web")
        }
        let app = try string(item, "app", at: at)
        var labels: [String: String] = [:]
        if let value = item["labels"], value != .null {
            guard case .object(let members) = value else { throw .init("\(at).labels is a \(value.typeName), not an object") }
            for member in members {
                guard case .string(let text) = member.value else {
                    throw .init("\(at).labels.\(member.key.prefix(40)) is a \(member.value.typeName), not a string")
                }
                labels[member.key] = text
            }
        }
        return RegisteredDevice(
            kind: kind, id: id, platform: platform, app: app, labels: labels, pushToStart: try stringMap(item, "push_to_start", at: at),
            liveActivityToken: try string(item, "live_activity_token", at: at))
    }

    /// A member that must be an object of non-empty strings when present (null counts as absent).
    private static func stringMap(_ item: JSONValue, _ name: String, at: String) throws(RegistryRecordError) -> [String: String] {
        guard let value = item[name], value != .null else { return [:] }
        guard case .object(let members) = value else { throw .init("\(at).\(name) is a \(value.typeName), not an object") }
        var map: [String: String] = [:]
        for member in members {
            guard case .string(let text) = member.value, !text.isEmpty else {
                throw .init("\(at).\(name).\(member.key.prefix(40)) is not a non-empty string")
            }
            map[member.key] = text
        }
        return map
    }

    /// A member that must be a non-empty string when present (null counts as absent).
    private static func string(_ item: JSONValue, _ name: String, at: String) throws(RegistryRecordError) -> String? {
        guard let value = item[name], value != .null else { return nil }
        guard case .string(let text) = value else { throw .init("\(at).\(name) is a \(value.typeName), not a string") }
        guard !text.isEmpty else { throw .init("\(at).\(name) is empty") }
        return text
    }
}
