import ArgumentParser
import Foundation
import Localization
import Mapping
import MappingLocalization

struct PreviewCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "preview",
        abstract: "Show what each phone displays for an event, per locale and platform.",
        discussion: """
            Renders the event with the mappings (as `render` does), reads the loc keys and \
            args from the FCM message, and formats them with the app's real resources: Java \
            Formatter rules on Android, String(format:) with %@ on iOS. Where the phone would \
            fail, the failure is shown instead of text (✗ Android: \
            IllegalFormatConversionException — app crashes in background). A locale without \
            its own strings shows the fallback and says so. Default: every locale found. A user \
            target needs --user-state (a registry record, as `render` takes it); the user's rules \
            apply now, and a push they withhold prints why. For a mapping with cap or dedup, \
            --rules-store reads a worker's rules store (read-only) and says whether the push would be \
            withheld now as a duplicate or by the cap, as `render --rules-store` does.

            Examples:
              pushbridge preview --mappings examples/mappings \\
                  --event examples/events/welcome.json \\
                  --android-res examples/resources/android/res \\
                  --ios examples/resources/ios --locale fr --locale ar
              pushbridge preview --mappings m.yaml --event e.json --ios ios/
              # a user's push, with their devices and rules from a registry record
              pushbridge preview --mappings examples/registry/mapping.yaml \\
                  --event examples/events/chat-message.user.json \\
                  --user-state examples/registry/user-42.json --locale de
            """
    )

    @OptionGroup var mappings: MappingOptions

    @OptionGroup var event: EventOptions

    @Option(name: .long, help: ArgumentHelp("A device locale (fr, pt-BR, ar); repeatable or comma-separated.", valueName: "tag"))
    var locale: [String] = []

    @OptionGroup var resources: ResourceOptions

    @OptionGroup var user: UserStateOptions

    @OptionGroup var rulesStore: RulesStoreOptions

    func run() throws {
        let set = try mappings.load()
        var record = try event.record()
        // A record just produced: a Live Activity's timestamp is its time.
        record.timestamp = EpochClock.milliseconds()
        var rendered: MappingSet.Rendered
        // What a device shows does not depend on the event's age: max_age is not applied (a
        // file has no Kafka timestamp to measure from).
        switch set.renderAsSent(record, maxAge: .ignore, users: try user.lookup()) {
        case .success(let r):
            rendered = r
            UserStateOptions.report(r)
            switch try rulesStore.judge(r, set: set, now: record.timestamp ?? EpochClock.milliseconds()) {
            case .send(let messages): rendered.messages = messages
            case .withheld(let reason, let code):
                FileHandle.standardError.write(Data("cannot render: \(reason) [\(code)]\n".utf8))
                throw ExitCode(2)
            }
        case .failure(let failure):
            if case .noVariant(let none) = failure { print(none.summary) }
            FileHandle.standardError.write(Data("cannot render: \(failure.reason) [\(failure.code)]\n".utf8))
            throw ExitCode(2)
        }
        let catalogs = resources.catalogs()
        for problem in catalogs.flatMap(\.problems) where problem.severity == .error {
            FileHandle.standardError.write(Data("\(problem)\n".utf8))
        }
        var pushes: [LocalizedPush] = []
        for message in rendered.messages {
            for push in LocKeyUses.pushes(message.json) where !pushes.contains(push) { pushes.append(push) }
        }
        let type = rendered.event.type
        let mapping = set.mappings(of: type).first { $0.variant == rendered.variant }
        let origin = mapping.map { " (\($0.file):\($0.line))" } ?? ""
        let count = rendered.messages.count
        let same = count > 1 && rendered.messages.allSatisfy { $0.push == nil } ? ", same text for each" : ""
        print("\(type)\(origin): \(count) message\(count == 1 ? "" : "s")\(same)")
        if let variant = rendered.variant { print(variant.summary) }
        var byPush: [(name: String, count: Int, variant: String?)] = []
        for push in rendered.messages.compactMap(\.push) {
            if let i = byPush.firstIndex(where: { $0.name == push.name }) {
                byPush[i].count += 1
            } else {
                byPush.append((push.name, 1, push.variant))
            }
        }
        for push in byPush {
            print("push \(push.name)\(push.variant.map { " (variant \($0))" } ?? ""): \(push.count) message\(push.count == 1 ? "" : "s")")
        }
        if let activity = rendered.messages.first?.liveActivity, let aps = rendered.messages.first?.json["apns"]?["payload"]?["aps"] {
            // What the activity shows is the app's view of its content state.
            let state = aps["content-state"].map { String(decoding: JSONWriter.write($0), as: UTF8.self) } ?? "(unchanged)"
            print("Live Activity \(activity.key): \(activity.event.rawValue), content-state \(state)")
        }
        let web = rendered.messages.lazy.compactMap { LocKeyUses.webTexts($0.json) }.first
        if let web { print("web: " + [web.title, web.body].compactMap { $0 }.joined(separator: " — ")) }
        guard !pushes.isEmpty else {
            if web == nil { print("no visible text: a silent (data-only) push") }
            return
        }
        let locales = self.locales(catalogs)
        print(Previewer.table(Previewer.preview(pushes, locales: locales, catalogs: catalogs)), terminator: "")
    }

    /// --locale values, else every locale of the catalogs (default first).
    private func locales(_ catalogs: [ResourceCatalog]) -> [String] {
        let given = locale.flatMap { $0.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) } }.filter { !$0.isEmpty }
        if !given.isEmpty { return given }
        var all: [String] = []
        for c in catalogs { for l in c.locales where !all.contains(l) { all.append(l) } }
        return all
    }
}
