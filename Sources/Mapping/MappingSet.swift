import Dates
import RecordDecoding

/// All loaded mappings: event in, FCM messages out. Pure: no I/O.
///
/// ```swift
/// let set = try MappingSet.load(files: [("welcome.yaml", yamlText)])
/// switch set.render(EventRecord(value: bytes)) { ... }
/// ```
public struct MappingSet: Sendable {
    /// One per event type; for one with variants, its first variant (``mappings(of:)`` lists all).
    public let mappings: [String: EventMapping]
    public let eventFormat: EventFormat
    /// The compiled templates by event type, looked up per event without copying a mapping.
    let templates: [String: MessageTemplate]
    /// The parts of an event the mappings read; decoding builds only these.
    let fields: EventFields
    /// The `max_age` of the event types that have one, looked up per event without copying a
    /// mapping (most sets have none, and skip the look-up).
    let maxAges: [String: MaxAge]
    /// The `project` of the event types that name one (most sets have none).
    let projects: [String: ValueSource]
    /// The mapping and device filter of the event types that target a user, looked up per event
    /// without copying a mapping (most sets have none).
    let userTargets: [String: UserTarget]
    /// The rules of the event types that send to devices the event names and name the user
    /// whose preferences apply (`user:`; most sets have none).
    let namedUsers: [String: UserRules]
    /// What loaded but is likely a mistake (e.g. a collapse key per event), file:line each.
    public let warnings: [MappingLoadError]
    /// The event types with `variants` (``mappings`` holds their first variant); most sets have none.
    let variantSets: [String: VariantSet]
    /// The event types with `pushes` (``mappings`` holds their first push's first mapping).
    let pushSets: [String: PushSet]
    /// The event types with `cap` or `dedup` (most sets have none).
    private(set) var statefulTypes: [String: StatefulMapping] = [:]
    /// The `send_at` of the plain event types that have one (most sets have none).
    private(set) var sendAts: [String: SendAt] = [:]

    /// Loads mapping files given as (path, contents). Every error in every file is reported.
    /// - Throws: ``MappingLoadErrors``; nothing is loaded unless everything is valid.
    /// - Parameter statefulRules: whether the worker runs the rules engine that `cap` and
    ///   `dedup` need (docs/rules-state.md); without it a mapping with either is refused.
    public static func load(files: [(path: String, contents: String)], statefulRules: Bool = false) throws(MappingLoadErrors) -> MappingSet {
        var loader = MappingLoader()
        loader.statefulRules = statefulRules
        for (path, contents) in files { loader.load(file: path, contents: contents) }
        guard loader.errors.isEmpty else { throw MappingLoadErrors(errors: loader.errors) }
        let compiled = loader.mappings.map { m in
            var m = m
            m.template = m.compileTemplate()
            return m
        }
        let format = loader.format ?? EventFormat()
        let variantSets = loader.variantSets.map(\.compiled)
        let pushSets = loader.pushSets.map { set in
            var set = set
            for i in set.pushes.indices {
                switch set.pushes[i].route {
                case .one(var m):
                    m.template = m.compileTemplate()
                    set.pushes[i].route = .one(m)
                case .variants(let variants): set.pushes[i].route = .variants(variants.compiled)
                }
            }
            return set
        }
        let pushMappings = pushSets.flatMap { $0.pushes.flatMap(\.mappings) }
        var set = MappingSet(
            mappings: Dictionary(
                uniqueKeysWithValues: (compiled + variantSets.map { $0.variants[0] } + pushSets.map { $0.pushes[0].mappings[0] }).map {
                    ($0.eventType, $0)
                }),
            eventFormat: format,
            templates: Dictionary(uniqueKeysWithValues: compiled.compactMap { m in m.template.map { (m.eventType, $0) } }),
            fields: EventFields(
                format: format, mappings: compiled + variantSets.flatMap(\.variants) + pushMappings,
                conditions: pushSets.flatMap { $0.pushes.flatMap { $0.conditions.map(\.pointer) } }),
            maxAges: Dictionary(uniqueKeysWithValues: compiled.compactMap { m in m.maxAge.map { (m.eventType, $0) } }),
            projects: Dictionary(uniqueKeysWithValues: compiled.compactMap { m in m.project.map { (m.eventType, $0) } }),
            userTargets: Dictionary(
                uniqueKeysWithValues: compiled.compactMap { m in Self.userFilter(m).map { (m.eventType, UserTarget(mapping: m, filter: $0)) } }),
            namedUsers: Dictionary(uniqueKeysWithValues: compiled.compactMap { m in m.rules.user == nil ? nil : (m.eventType, m.rules) }),
            warnings: loader.warnings(format: format),
            variantSets: Dictionary(uniqueKeysWithValues: variantSets.map { ($0.eventType, $0) }),
            pushSets: Dictionary(uniqueKeysWithValues: pushSets.map { ($0.eventType, $0) }))
        set.sendAts = Dictionary(uniqueKeysWithValues: compiled.compactMap { m in m.sendAt.map { (m.eventType, $0) } })
        set.statefulTypes = Dictionary(
            uniqueKeysWithValues: compiled.compactMap { m in
                if let digest = m.digest {
                    // Its first push (`first: now`) and its closes are deduplicated within the window and an hour.
                    return (m.eventType, StatefulMapping(rules: m.rules, stateful: StatefulRules(dedupWindow: digest.dedupSeconds), digest: digest))
                }
                return m.stateful.isEmpty ? nil : (m.eventType, StatefulMapping(rules: m.rules, stateful: m.stateful))
            })
        return set
    }

    /// The `cap` and `dedup` of an event type, with the rules they count by (its `category`);
    /// nil for one without (most). Only plain mappings have them (``StatefulMapping``).
    public func stateful(of eventType: String) -> StatefulMapping? {
        statefulTypes.isEmpty ? nil : statefulTypes[eventType]
    }

    /// Whether some event type has `cap` or `dedup`: the worker runs the rules engine.
    public var hasStatefulRules: Bool { !statefulTypes.isEmpty }

    /// The outcome for one Kafka record.
    public struct Rendered: Sendable {
        public var event: DecodedEvent
        public var messages: [FCMMessage]
        /// The name in `fcm.projects` of the project that sends them; nil: the default one.
        /// A message to a user's device may name its own (``FCMMessage/project``).
        public var project: String?
        /// The user a `user` target named, whose devices the messages go to.
        public var user: String?
        /// The variant chosen, for an event type with `variants`.
        public var variant: Variant?
        /// The user's devices left out by the rules while the others get the push (a device
        /// that muted the category: ``WithholdRule/deviceMuted``).
        public var withheldDevices: [WithheldDevice] = []
        /// Rules that would have withheld a push, bypassed because the mapping is critical.
        public var bypassed: [WithholdRule] = []
        /// For an event type with `pushes`: the pushes a rule withheld while others go.
        public var withheldPushes: [Withheld] = []
        /// The push waits until its `send_at` (``messages`` is empty): nothing was looked up
        /// or rendered; it is, again, at the due time.
        public var deferral: Deferral?
    }

    /// A user's devices and preferences, from the device registry; throws when the registry
    /// cannot be read.
    public typealias UserLookup = @Sendable (_ user: String) throws -> UserRecord
    /// A user's devices, for a caller with no preferences to give (tests, `render`).
    public typealias DeviceLookup = @Sendable (_ user: String) throws -> [UserDevice]

    /// Whether some event type targets a user: the worker needs a device registry.
    public var targetsUsers: Bool {
        !userTargets.isEmpty || variantSets.values.contains(where: \.targetsUsers)
            || pushSets.values.contains { $0.pushes.contains { $0.mappings.contains { if case .user = $0.target { true } else { false } } } }
    }

    /// Decodes the record, finds its mapping, and renders its messages, or says why it cannot.
    ///
    /// - Parameters:
    ///   - now: the time of sending, in seconds since the Unix epoch (a TTL becomes an absolute
    ///     `apns-expiration`, and an event's age is measured to it); nil, the clock's, read only
    ///     for a mapping with a TTL or a `max_age`.
    ///   - clock: the wall clock `now` is read from when nil (``SystemWallClock``; a worker on a
    ///     test clock passes its own).
    ///   - maxAge: `.ignore` renders events older than their `max_age` too
    ///     (`replay --ignore-max-age`); otherwise they fail with ``MappingFailure/tooOld(_:)``.
    ///   - devices: looks up a user's devices for a `user` target; nil: no registry, and such
    ///     events fail with ``MappingFailure/registryUnavailable(_:)``.
    ///   - schema: the writer schema of a Schema Registry record (``ValueFormat/encoding(of:topic:)``
    ///     says which records are), fetched by the caller; nil for JSON and CloudEvents.
    public func render(
        _ record: EventRecord, schema: WriterSchema? = nil, now: Int64? = nil, clock: any WallClock = SystemWallClock(),
        maxAge check: MaxAgeCheck = .enforce, devices: DeviceLookup?
    ) -> Result<Rendered, MappingFailure> {
        var users: UserLookup?
        if let devices { users = { user throws -> UserRecord in UserRecord(devices: try devices(user)) } }
        return render(record, schema: schema, now: now, clock: clock, maxAge: check, users: users)
    }

    /// ``render(_:schema:now:maxAge:devices:)`` with each user's preferences: the mapping's
    /// rules (``UserRules``) apply to them.
    ///
    /// - Parameter mayDefer: false for a push deferred by quiet hours too often already: it is
    ///   sent even inside them (``UserRules/judge(_:user:preferences:now:mayDefer:)``).
    public func render(
        _ record: EventRecord, schema: WriterSchema? = nil, now: Int64? = nil, clock: any WallClock = SystemWallClock(),
        maxAge check: MaxAgeCheck = .enforce, users lookup: UserLookup? = nil, mayDefer: Bool = true
    ) -> Result<Rendered, MappingFailure> {
        let event: DecodedEvent
        switch eventFormat.decode(record, schema: schema, fields: fields) {
        case .success(let e): event = e
        case .failure(let f): return .failure(f)
        }
        if !pushSets.isEmpty, let set = pushSets[event.type] {
            return renderPushes(set, event, record: record, now: now, clock: clock, check: check, lookup: lookup)
        }
        var chosen: EventMapping?  // for an event type with variants; nil for the others
        if !variantSets.isEmpty, let set = variantSets[event.type] {
            switch choose(set, event) {
            case .success(let m): chosen = m
            case .failure(let f): return .failure(f)
            }
        }
        return render(event, record: record, chosen: chosen, now: now, clock: clock, check: check, lookup: lookup, mayDefer: mayDefer)
    }

    /// Renders `event` with `chosen` (a variant, or one push's mapping), else its type's one
    /// mapping, looked up without copying it.
    func render(
        _ event: DecodedEvent, record: EventRecord, chosen: EventMapping?, now: Int64?, clock: any WallClock, check: MaxAgeCheck,
        lookup: UserLookup?, mayDefer: Bool = true
    ) -> Result<Rendered, MappingFailure> {
        var now = now
        var remaining: Int?
        // `send_at`'s due, when it has come: `max_age` counts from it.
        var intended: Int64?
        if let sendAt = chosen.map({ $0.sendAt }) ?? (sendAts.isEmpty ? nil : sendAts[event.type]) {
            switch deferral(event, record: record, sendAt: sendAt, chosen: chosen, now: now, clock: clock) {
            case .success(.later(let deferral)): return .success(Rendered(event: event, messages: [], variant: chosen?.variant, deferral: deferral))
            case .success(.due(let due)): intended = due
            case .failure(let f): return .failure(f)
            }
        }
        if let maxAge = chosen.map({ $0.maxAge }) ?? (maxAges.isEmpty ? nil : maxAges[event.type]) {
            switch age(event, record: record, maxAge: maxAge, intended: intended, now: &now, clock: clock, check: check) {
            case .success(let seconds): remaining = seconds
            case .failure(let f): return .failure(f)
            }
        }
        var project: String?
        if let source = chosen.map({ $0.project }) ?? (projects.isEmpty ? nil : projects[event.type]) {
            do throws(MappingFailure) {
                project = try Resolver(event: event, now: now, clock: clock).string(source, role: "project")
            } catch {
                return .failure(error)
            }
        }
        var user: String?
        var devices: [UserDevice] = []
        var rules = RuleJudgement(devices: [])
        var found: Result<(String, RuleJudgement), MappingFailure>?
        if let chosen {
            if let filter = Self.userFilter(chosen) {
                found = userDevices(chosen, event, filter: filter, lookup: lookup, now: &now, clock: clock, mayDefer: mayDefer)
            }
        } else if !userTargets.isEmpty, let target = userTargets[event.type] {
            found = userDevices(target.mapping, event, filter: target.filter, lookup: lookup, now: &now, clock: clock, mayDefer: mayDefer)
        }
        switch found {
        case .success(let found)?:
            (user, rules) = found
            devices = rules.devices
            if let until = rules.deferUntil {
                let deferral = Deferral(due: until * 1000, subject: found.0, reason: .quietHours)
                return .success(Rendered(event: event, messages: [], user: user, variant: chosen?.variant, deferral: deferral))
            }
        case .failure(let f)?: return .failure(f)
        case nil: break
        }
        let withheldDevices = rules.withheldDevices.map { WithheldDevice(device: $0, user: user ?? "", rule: .deviceMuted) }
        let bypassed = rules.bypassed
        if let template = chosen.map({ $0.template }) ?? templates[event.type],
            let messages = try? template.render(event, now: now, remainingTTL: remaining, clock: clock, devices: devices)
        {
            let rendered = Rendered(
                event: event, messages: messages, project: project, user: user, variant: chosen?.variant, withheldDevices: withheldDevices,
                bypassed: bypassed)
            guard let rules = chosen.map({ $0.rules.user == nil ? nil : $0.rules }) ?? (namedUsers.isEmpty ? nil : namedUsers[event.type]) else {
                return .success(rendered)
            }
            return judge(rendered, rules, lookup: lookup, now: now, clock: clock, mayDefer: mayDefer)
        }
        // No template, or a failure, which the tree path names.
        guard let mapping = chosen ?? mappings[event.type] else { return .failure(.unknownEventType(event.type)) }
        if mapping.activity != nil {
            return mapping.render(event, recordTimestamp: record.timestamp, now: now, clock: clock, remainingTTL: remaining, devices: devices).map {
                Rendered(event: event, messages: $0, project: project, user: user, variant: chosen?.variant)
            }
        }
        return mapping.render(event, now: now, clock: clock, remainingTTL: remaining, devices: devices).flatMap {
            let rendered = Rendered(
                event: event, messages: $0, project: project, user: user, variant: chosen?.variant, withheldDevices: withheldDevices,
                bypassed: bypassed)
            guard mapping.rules.user != nil else { return .success(rendered) }
            return judge(rendered, mapping.rules, lookup: lookup, now: now, clock: clock, mayDefer: mayDefer)
        }
    }

    /// `user`'s record from the registry, or why it cannot be had: not the event's fault.
    static func record(of user: String, _ lookup: UserLookup?) throws(MappingFailure) -> UserRecord {
        guard let lookup else { throw .registryUnavailable("no device registry is configured (registry.topic)") }
        do {
            return try lookup(user)
        } catch {
            throw .registryUnavailable("\(error)")
        }
    }

    /// A `user` target's user and their devices that pass its filter and the mapping's rules
    /// (``UserRules``), or why there are none. Reads the clock into `now` when a rule needs it.
    private func userDevices(
        _ mapping: EventMapping, _ event: DecodedEvent, filter: DeviceFilter, lookup: UserLookup?, now: inout Int64?,
        clock: any WallClock, mayDefer: Bool
    ) -> Result<(String, RuleJudgement), MappingFailure> {
        do throws(MappingFailure) {
            guard let user = try mapping.user(in: event) else { return .success(("", RuleJudgement(devices: []))) }
            let record = try Self.record(of: user, lookup)
            let devices = record.devices.filter(filter.admits)
            guard !devices.isEmpty else { throw .noDevices(user: user) }
            guard !mapping.rules.isEmpty else { return .success((user, RuleJudgement(devices: devices))) }
            let instant = now ?? clock.nowMilliseconds() / 1000
            now = instant
            let judgement = mapping.rules.judge(devices, user: user, preferences: record.preferences, now: instant, mayDefer: mayDefer)
            if let whole = judgement.whole {
                throw .withheld(
                    Withheld(eventType: event.type, eventID: event.id, user: user, rule: whole.rule, reason: whole.reason))
            }
            return .success((user, judgement))
        } catch {
            return .failure(error)
        }
    }

    /// Where the mappings choose a project, for checking them against the config's
    /// `fcm.projects` when a worker starts. Sorted by file and line.
    public var projectChoices: [ProjectChoice] {
        allMappings.map { m -> ProjectChoice in
            let fixed: String?
            let field: String?
            switch m.project {
            case nil: (fixed, field) = (nil, nil)
            case .literal(let name)?: (fixed, field) = (name, nil)
            case .field(let pointer, let fallback)?: (fixed, field) = (fallback, pointer.description)
            case .eventID?, .pushID?, .digest?: (fixed, field) = (nil, nil)  // refused by the loader
            }
            var choice = ProjectChoice(eventType: m.eventType, file: m.file, line: m.line, name: fixed, field: field)
            if case .user(_, let filter) = m.target {
                choice.targetsUser = true
                choice.apps = (filter.apps ?? []).sorted()
            }
            choice.namesUser = m.rules.user != nil
            return choice
        }.sorted { ($0.file, $0.line) < ($1.file, $1.line) }
    }

    /// `max_age` applied to one event: the seconds `ttl: remaining` gives it, or why it is not
    /// sent. Reads the clock once, in milliseconds, and sets `now` from it, so the age and
    /// `apns-expiration` are measured to the same instant.
    /// - Parameter intended: `send_at`'s due, from which the age counts instead of the event's time.
    private func age(
        _ event: DecodedEvent, record: EventRecord, maxAge: MaxAge, intended: Int64?, now: inout Int64?, clock: any WallClock,
        check: MaxAgeCheck
    ) -> Result<Int, MappingFailure> {
        guard check == .enforce else { return .success(maxAge.seconds) }
        let instant = now.map { $0 * 1000 } ?? clock.nowMilliseconds()
        now = now ?? instant / 1000
        do {
            let time: Int64
            if let intended {
                time = intended
            } else {
                time = try EventAge.eventTime(event, recordTimestamp: record.timestamp, from: maxAge.eventTime)
            }
            switch EventAge.judge(eventTime: time, now: instant, maxAgeSeconds: maxAge.seconds) {
            case .fresh(let remaining): return .success(remaining)
            case .tooOld(let age):
                return .failure(
                    .tooOld(
                        TooOld(
                            eventType: event.type, eventID: event.id, ageMilliseconds: age, maxAgeSeconds: maxAge.seconds,
                            measuredFrom: intended == nil ? maxAge.eventTime.name : "its send_at", action: maxAge.whenTooOld)))
            }
        } catch {
            return .failure(error)
        }
    }

    /// The event types that have a mapping, sorted.
    public var eventTypes: [String] { mappings.keys.sorted() }
}

/// A `user` target's mapping and device filter. A final class, so that looking one up per event
/// costs one retain, not a copy of every field of the mapping.
final class UserTarget: Sendable {
    let mapping: EventMapping
    let filter: DeviceFilter

    init(mapping: EventMapping, filter: DeviceFilter) {
        self.mapping = mapping
        self.filter = filter
    }
}

/// How one mapping chooses its Firebase project (``MappingSet/projectChoices``).
public struct ProjectChoice: Sendable, Equatable {
    public var eventType: String
    public var file: String
    public var line: Int
    /// The name it sends with: fixed, or a field's default. nil with no field: the default
    /// project; nil with a field: none (an event without the field fails with missing_field).
    public var name: String?
    /// The field it reads the name from, if any.
    public var field: String?
    /// It targets a user, whose devices the device registry lists (each may name its app's project).
    public var targetsUser = false
    /// Sends to devices the event names, with the rules of a user it names (`user:`): needs the
    /// device registry for their preferences.
    public var namesUser = false
    /// The apps (projects) a `user` target's filter lets through.
    public var apps: [String] = []
}
