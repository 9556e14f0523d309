import FCM
import Kafka
import Mapping
import Rules

// What an event calls for once rendered (``EventProcessor/Plan``): sends, a verdict, the rules
// stage, the timer topic or a digest window.
extension EventProcessor {
    /// Renders the event: the sends it calls for, or its verdict without any.
    @inline(never)
    func plan(
        _ record: EventRecord, _ schema: Result<WriterSchema?, RecordSchemas.Failure>, _ facts: inout EventFacts, firing timer: TimerRecord? = nil,
        cancelled: TimerCancel? = nil
    ) -> Plan {
        let rendering: Result<MappingSet.Rendered, MappingFailure>
        // Quiet hours that keep moving (the user changed them, or their zone) defer a push a few
        // times at most; then it is sent.
        let redefers = timer?.reason == .quietHours ? timer!.redefers + 1 : 0
        switch schema {
        case .success(let schema):
            rendering = mappings.render(
                record, schema: schema, clock: options.clock, maxAge: options.maxAge, users: lookup, mayDefer: redefers <= Self.maxRedefers)
        case .failure(.cancelled): return .verdict(EventVerdict(disposition: .abandoned))
        case .failure(.failed(let failure)): rendering = .failure(failure)
        }
        return plan(rendered: rendering, record: record, &facts, cancelled: cancelled, redefers: redefers)
    }

    /// The sends a rendering calls for, or its verdict without any.
    ///
    /// - Parameter digestClose: for a digest window's push (``closeDigest(_:_:partition:)``): its
    ///   notification, the window's, in place of the event's.
    func plan(
        rendered rendering: Result<MappingSet.Rendered, MappingFailure>, record: EventRecord, _ facts: inout EventFacts,
        cancelled: TimerCancel? = nil, redefers: Int = 0, digestClose: NotificationID? = nil
    ) -> Plan {
        switch rendering {
        case .failure(let failure):
            if case .tooOld(let old) = failure {  // decoded, unlike most failures: its record can say what it was
                facts.eventType = old.eventType
                facts.eventID = old.eventID
            }
            if case .noVariant(let none) = failure {
                facts.eventType = none.eventType
                facts.eventID = none.eventID
            }
            if case .withheld(let w) = failure {
                (facts.eventType, facts.eventID, facts.user) = (w.eventType, w.eventID, w.user)
                facts.rules.withheld = [(w.rule, w.reason, w.user, w.push, nil)]
            }
            return .verdict(
                .mappingFailed(failure, skipUnknownTypes: options.skipUnknownEventTypes, skipUsersWithoutDevices: options.skipUsersWithoutDevices))
        case .success(let rendered):
            facts.eventType = rendered.event.type
            facts.eventID = rendered.event.id
            facts.user = rendered.user
            facts.variant = rendered.variant?.label
            if let cancelled { return .verdict(Self.cancelledVerdict(cancelled)) }
            if let deferral = rendered.deferral { return .schedule(deferral, redefers: deferral.reason == .quietHours ? redefers : 0) }
            if !rendered.withheldDevices.isEmpty || !rendered.bypassed.isEmpty || !rendered.withheldPushes.isEmpty {
                facts.rules = RuleFacts(rendered)
            }
            switch projects(of: rendered) {
            case .success(let sends) where sends.isEmpty:
                // Every device of the user named an app the config lacks.
                return .verdict(
                    .mappingFailed(
                        .noDevices(user: rendered.user ?? ""), skipUnknownTypes: options.skipUnknownEventTypes,
                        skipUsersWithoutDevices: options.skipUsersWithoutDevices))
            case .success(let sends):
                facts.sent = sends
                if let mapping = mappings.stateful(of: rendered.event.type) {
                    if let topic = options.rekeyTopic { return .rekey(subject: StatefulPush.subject(of: rendered), topic: topic) }
                    if rules != nil {
                        if let digest = mapping.digest, digestClose == nil { return .digest(digestPlan(rendered, mapping, digest, record: record)) }
                        return .stateful(statefulPlan(rendered, mapping, notification: digestClose))
                    }
                }
                return .send
            case .failure(let unknown):
                return .verdict(.unknownProject(unknown.name))
            }
        }
    }
}
