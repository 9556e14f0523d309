/// The parts of an event that the loaded mappings read, so that decoding builds only those.
///
/// Taken from the compiled templates' holes, the same record the renderer fills, so a field a
/// mapping reads cannot be left out. A mapping without a template, or with a digest, reads
/// everything.
struct EventFields: Sendable {
    /// For plain JSON and structured CloudEvents: the record value.
    var document = JSONPathSet()
    /// For binary-mode CloudEvents: the record value is the data.
    var data = JSONPathSet()

    /// - Parameter conditions: fields read to choose what to send besides the mappings' own
    ///   (the `when` of pushes).
    init(format: EventFormat, mappings: some Sequence<EventMapping>, conditions: [JSONPointer] = []) {
        for pointer in [format.typePointer] + (format.idPointer.map { [$0] } ?? []) {
            document.insert(pointer.tokens)
        }
        for pointer in conditions {
            data.insert(pointer.tokens)
            document.insert(pointer.tokens)
            document.insert(["data"] + pointer.tokens)
        }
        // What structured CloudEvents are recognised and identified by.
        for attribute in ["specversion", "type", "id", "data_base64"] { document.insert([attribute]) }
        for mapping in mappings {
            // A digest's `many` is rendered from the whole event (it has no template).
            guard let template = mapping.template, mapping.digest == nil else {
                document = .all
                data = .all
                return
            }
            var pointers = template.holes.compactMap { hole -> JSONPointer? in
                if case .field(let pointer, _)? = hole.source { pointer } else { nil }
            }
            if case .devices(_, .field(let pointer)) = mapping.target { pointers.append(pointer) }
            if case .user(.field(let pointer, _), _) = mapping.target { pointers.append(pointer) }
            if case .field(let pointer, _)? = mapping.maxAge?.eventTime { pointers.append(pointer) }
            if case .field(let pointer, _)? = mapping.sendAt { pointers.append(pointer) }
            if case .after(_, .field(let pointer, _))? = mapping.sendAt { pointers.append(pointer) }
            if case .field(let pointer, _)? = mapping.project { pointers.append(pointer) }
            if case .field(let pointer, _)? = mapping.rules.user { pointers.append(pointer) }
            pointers += mapping.variant?.conditions.map(\.pointer) ?? []  // read to choose the variant
            for pointer in pointers {
                data.insert(pointer.tokens)
                document.insert(pointer.tokens)
                document.insert(["data"] + pointer.tokens)
            }
        }
        // Structured events are checked for having `data`, even when no mapping reads it.
        if Array("data".utf8).withUnsafeBufferPointer({ document.member($0) }) == nil { document.insert(["data"]) }
    }
}
