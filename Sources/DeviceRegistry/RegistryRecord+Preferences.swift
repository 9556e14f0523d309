import Dates
import JSON
import Preferences

// The preference members of a registry record (docs/registry.md, *Preferences*). A member whose
// value the format does not allow is dropped and named, never fatal to the record.
extension RegistryRecord {
    static func preferences(in document: JSONValue, dropped: inout [String]) -> UserChoices {
        var preferences = UserChoices()
        switch document["time_zone"] {
        case nil, .null?: break
        case .string(let name)? where TimeZoneDatabase.isWellFormed(name): preferences.timeZone = name
        default: dropped.append("time_zone")
        }
        if let muted = categories(document["muted"]) {
            preferences.muted = muted
        } else {
            dropped.append("muted")
        }
        switch document["quiet_hours"] {
        case nil, .null?: break
        case .string("off")?: preferences.quietHours = .off
        case let window?:
            if let from = window["from"].flatMap(clock), let to = window["to"].flatMap(clock), let quiet = QuietWindow(from: from, to: to),
                case .object(let members) = window, members.count == 2
            {
                preferences.quietHours = .window(quiet)
            } else {
                dropped.append("quiet_hours")
            }
        }
        return preferences
    }

    /// A list of categories: absent or null is none; nil when it is not an array of category
    /// names (`^[a-z0-9][a-z0-9_.-]{0,63}$`). Sorted, each once.
    static func categories(_ value: JSONValue?) -> [String]? {
        guard let value, value != .null else { return [] }
        guard case .array(let items) = value, items.count <= 256 else { return nil }
        var names = Set<String>()
        for item in items {
            guard case .string(let name) = item, NotificationCategory.isValid(name) else { return nil }
            names.insert(name)
        }
        return names.sorted()
    }

    private static func clock(_ value: JSONValue) -> ClockTime? {
        guard case .string(let text) = value else { return nil }
        return ClockTime(text)
    }
}
