import ArgumentParser
import Dates
import Foundation
import Mapping

struct RenderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Print the exact FCM request bodies an event would produce.",
        discussion: """
            Prints one {"message": ...} body per line (one per token for a token list), exactly as \
            pushbridge would POST it to FCM's messages:send, or the reason the event cannot be sent \
            (exit status 2). For an event type with variants, standard error says which variant was \
            taken and why (variant: shipped (/status = "shipped")), or that none matched; with \
            several pushes, which push each body belongs to (push: seller).

            A user target needs the user's registry record: --user-state gives one, as the registry \
            topic holds it ({"devices": [...], "time_zone": ..., "muted": [...], "quiet_hours": ...}), \
            for every user the event names. The user's rules (docs/rules.md) apply at --now: a push \
            they withhold prints why (muted, quiet_hours), and a device that muted the category is \
            named on standard error.

            A mapping with cap or dedup is decided by the workers' shared state: render says which \
            apply. --rules-store reads a worker's rules store (its rules.state_path; read-only, the \
            worker may be running) and judges the event at --now as the worker owning the event's \
            state partition would, if the store holds that partition: withheld as a duplicate (FCM \
            already acknowledged it), by the cap (how many are counted in the window, and when the \
            oldest leaves it), or sent. An event without an ID takes its coordinates as its ID \
            (--source, default events/0/0).

            A mapping with a max_age renders only an event young enough to send, as `run` would; an \
            older one prints why (too_old). Its age is measured to --now (default: the clock) from the \
            mapping's occurred_at field, or from --timestamp, the Kafka record's time (default: --now, a \
            record just produced). --now also fixes apns-expiration, so the output can be compared.

            Examples:
              pushbridge render --mappings examples/mappings \\
                  --event examples/events/welcome.json
              cat event.json | pushbridge render --mappings m.yaml --event - --pretty
              pushbridge render --mappings m.yaml --event data.json \\
                  --header ce_type=order.shipped --header ce_id=42
              # a chat message to a user, judged by their preferences at 23:30 in Berlin
              pushbridge render --mappings examples/registry/mapping.yaml \
                  --event examples/events/chat-message.user.json \
                  --user-state examples/registry/user-42.json --now 2027-01-15T22:30:00Z
              # would a worker send this like now, or withhold it (cap, duplicate)?
              pushbridge render --mappings examples/registry/mapping.yaml \\
                  --event examples/events/post-liked.user-44.1.json --user-state examples/registry/user-44.json \\
                  --rules-store /var/lib/pushbridge/rules.sqlite
              # a record produced 4 minutes before --now: ttl is what is left of max_age
              pushbridge render --mappings m.yaml --event arrived.json \\
                  --now 2027-01-15T08:10:00Z --timestamp 2027-01-15T08:06:00Z
            """
    )

    @OptionGroup var mappings: MappingOptions

    @OptionGroup var event: EventOptions

    @Flag(help: "Indent the JSON (the bytes sent are compact).")
    var pretty = false

    @Flag(name: .customLong("validate-only"), help: "Add \"validate_only\": true, FCM's dry run.")
    var validateOnly = false

    @Option(help: ArgumentHelp("Render as if sent at this RFC 3339 time (default: now).", valueName: "time"))
    var now: String?

    @Option(help: ArgumentHelp("The Kafka record's timestamp, RFC 3339: the event's time without occurred_at (default: --now).", valueName: "time"))
    var timestamp: String?

    @Flag(help: "Render an event older than its mapping's max_age too, as replay --ignore-max-age sends it.")
    var ignoreMaxAge = false

    @OptionGroup var user: UserStateOptions

    @OptionGroup var rulesStore: RulesStoreOptions

    func run() throws {
        let set = try mappings.load()
        var record = try event.record()
        let nowMilliseconds = try now.map { try Self.time($0, "--now") } ?? EpochClock.milliseconds()
        record.timestamp = try timestamp.map { try Self.time($0, "--timestamp") } ?? nowMilliseconds
        // The age is measured to the same whole second that sets apns-expiration.
        let users = try user.lookup()
        switch set.renderAsSent(record, now: nowMilliseconds / 1000, maxAge: ignoreMaxAge ? .ignore : .enforce, users: users) {
        case .success(let rendered):
            if let variant = rendered.variant { FileHandle.standardError.write(Data("\(variant.summary)\n".utf8)) }
            UserStateOptions.report(rendered)
            let messages: [FCMMessage]
            switch try rulesStore.judge(rendered, set: set, now: nowMilliseconds) {
            case .send(let sent): messages = sent
            case .withheld(let reason, let code):
                FileHandle.standardError.write(Data("cannot render: \(reason) [\(code)]\n".utf8))
                throw ExitCode(2)
            }
            for message in messages {
                if let push = message.push {
                    let variant = push.variant.map { ", variant \($0)" } ?? ""
                    FileHandle.standardError.write(Data("push: \(push.name)\(variant)\(push.user.map { ", user \($0)" } ?? "")\n".utf8))
                }
                print(String(decoding: message.requestBody(validateOnly: validateOnly, pretty: pretty), as: UTF8.self))
            }
        case .failure(let failure):
            if case .noVariant(let none) = failure { FileHandle.standardError.write(Data("\(none.summary)\n".utf8)) }
            FileHandle.standardError.write(Data("cannot render: \(failure.reason) [\(failure.code)]\n".utf8))
            throw ExitCode(2)
        }
    }

    private static func time(_ text: String, _ flag: String) throws -> Int64 {
        guard let ms = RFC3339.parseMilliseconds(text) else {
            throw ValidationError("\(flag) \(text): expected an RFC 3339 time with a zone, e.g. 2027-01-15T08:00:00Z")
        }
        return ms
    }
}
