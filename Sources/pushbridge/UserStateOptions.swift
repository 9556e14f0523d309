import ArgumentParser
import Dates
import DeviceRegistry
import Foundation
import Jobs
import Mapping

/// `--user-state FILE` for `render`: a user's registry record (docs/registry.md), so that a user
/// target renders with their devices, and their rules (docs/rules.md) apply.
struct UserStateOptions: ParsableArguments {
    @Option(
        name: .customLong("user-state"),
        help: ArgumentHelp("A registry record (JSON, as on the registry topic) for the user the event names.", valueName: "file"))
    var file: String?

    @Option(
        name: .customLong("default-time-zone"),
        help: ArgumentHelp("The time zone of a user whose record names none (rules.default_time_zone).", valueName: "zone"))
    var defaultTimeZone = "UTC"

    /// The lookup the record answers for every user; nil without --user-state.
    func lookup() throws -> MappingSet.UserLookup? {
        guard let file else { return nil }
        guard let bytes = FileManager.default.contents(atPath: file) else { throw ValidationError("--user-state \(file): cannot read it") }
        guard let zone = TimeZoneDatabase.shared.zone(named: defaultTimeZone) else {
            throw ValidationError("--default-time-zone \(defaultTimeZone): not a time zone this machine knows")
        }
        let update: RegistryUpdate
        switch RegistryRecord.parse(key: Array("user".utf8), value: [UInt8](bytes)) {
        case .success(let parsed): update = parsed
        case .failure(let error): throw ValidationError("--user-state \(file): \(error.reason)")
        }
        for member in update.droppedPreferences {
            FileHandle.standardError.write(Data("--user-state: \(member) left out: its value is not one the format allows\n".utf8))
        }
        let record = RegistryDirectory.record(
            RegisteredUser(devices: update.devices ?? [], preferences: update.preferences), zones: .shared, defaultZone: zone)
        return { _ in record }
    }

    /// On standard error: the pushes and devices the user's rules withheld, and the rules a
    /// critical push went past.
    static func report(_ rendered: MappingSet.Rendered) {
        var lines: [String] = []
        for w in rendered.withheldPushes { lines.append("withheld: push \(w.push ?? "-"): \(w.reason) [\(w.rule.rawValue)]") }
        for w in rendered.withheldDevices {
            lines.append("withheld: \(w.device.kind.rawValue) …\(w.device.id.suffix(6)): it muted the category [\(w.rule.rawValue)]")
        }
        for rule in rendered.bypassed { lines.append("critical: sent despite \(rule.rawValue)") }
        if !lines.isEmpty { FileHandle.standardError.write(Data((lines.joined(separator: "\n") + "\n").utf8)) }
    }
}
