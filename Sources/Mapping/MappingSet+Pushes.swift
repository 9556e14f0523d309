import Dates

// The event types with `pushes` (docs/mapping.md, *Several pushes per event*): every push the
// event calls for, rendered all or nothing.
extension MappingSet {
    /// Renders each push `event` calls for, in order. A push that is not for this event (its
    /// `when`), whose variants take none of it (`unmatched: skip`), whose user has no device or
    /// that is too old (`too_old: skip`) sends nothing, and the others go on. Any other failure
    /// fails the whole event, so that nothing is sent of an event that is dead-lettered. When no
    /// push sends anything, the event fails as its first such push did (or ``MappingFailure/noPush(eventType:eventID:)``).
    func renderPushes(
        _ set: PushSet, _ event: DecodedEvent, record: EventRecord, now: Int64?, clock: any WallClock, check: MaxAgeCheck,
        lookup: UserLookup?
    ) -> Result<Rendered, MappingFailure> {
        var messages: [FCMMessage] = []
        var firstSkip: MappingFailure?
        var (withheldDevices, bypassed, withheldPushes): ([WithheldDevice], [WithholdRule], [Withheld]) = ([], [], [])
        for push in set.pushes {
            let mapping: EventMapping
            do throws(MappingFailure) {
                guard try push.applies(to: event) else { continue }
                switch push.route {
                case .one(let m): mapping = m
                case .variants(let variants):
                    switch choose(variants, event) {
                    case .success(let m): mapping = m
                    case .failure(let f) where f.skipsOnePush:
                        firstSkip = firstSkip ?? f
                        continue
                    case .failure(let f): throw f
                    }
                }
            } catch {
                return .failure(error)
            }
            switch render(event, record: record, chosen: mapping, now: now, clock: clock, check: check, lookup: lookup) {
            case .success(let rendered):
                for var message in rendered.messages {
                    message.push = FCMMessage.PushInfo(
                        name: push.name, project: rendered.project, user: rendered.user, variant: rendered.variant?.label)
                    messages.append(message)
                }
                for var w in rendered.withheldDevices {
                    w.push = push.name
                    withheldDevices.append(w)
                }
                bypassed += rendered.bypassed
            case .failure(.withheld(var w)):
                w.push = push.name
                withheldPushes.append(w)
                firstSkip = firstSkip ?? .withheld(w)
            case .failure(let f) where f.skipsOnePush:
                firstSkip = firstSkip ?? f
            case .failure(let f):
                return .failure(f)
            }
        }
        guard !messages.isEmpty else { return .failure(firstSkip ?? .noPush(eventType: event.type, eventID: event.id)) }
        return .success(
            Rendered(event: event, messages: messages, withheldDevices: withheldDevices, bypassed: bypassed, withheldPushes: withheldPushes))
    }
}

extension MappingFailure {
    /// A failure that, in an event with several pushes, leaves out the one push and not the
    /// others: nothing to send to, or a choice of the mapping not to send.
    var skipsOnePush: Bool {
        switch self {
        case .noDevices, .withheld: true
        case .noVariant(let none): none.action == .skip
        case .tooOld(let old): old.action == .skip
        default: false
        }
    }
}
