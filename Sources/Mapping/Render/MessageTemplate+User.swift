/// Where one kind of device's member (`"fid":"…"` or `"token":"…"`) goes in the message of a
/// `user` target, compiled without a target: a user's devices may be of both kinds, and the
/// writer puts each key in its own place among the others (keys sorted). The message is
/// rendered once per event, and each device's member spliced in.
struct TargetSplice: Sendable {
    var kind: MessageTarget.Kind
    /// The byte of the message without a target before which the member goes.
    var offset: Int
    /// The member's bytes before and after the device identifier (a JSON string): `"fid":` and
    /// `,`, or `,"token":` and nothing, as the keys around it fall.
    var before: [UInt8]
    var after: [UInt8]

    /// Found by writing the message with and without the member, as the tree path writes it:
    /// nil if the one is not the other with the member inserted (the tree path is used then).
    init?(_ kind: MessageTarget.Kind, body: [UInt8], shared: [(key: String, value: JSONValue)]) {
        let whole = JSONWriter.write(.object([(kind.rawValue, .string("\u{1}\u{1}"))] + shared))
        let value = Array(#""\u0001\u0001""#.utf8)
        let extra = whole.count - body.count
        guard extra >= value.count else { return nil }
        var p = 0
        while p < body.count, body[p] == whole[p] { p += 1 }
        let member = whole[p..<(p + extra)]
        guard whole[(p + extra)...].elementsEqual(body[p...]), let at = member.firstRange(of: value) else { return nil }
        self.kind = kind
        self.offset = p
        self.before = Array(member[..<at.lowerBound])
        self.after = Array(member[at.upperBound...])
    }
}

extension MessageTemplate {
    /// A `user` target's template: the message without a target, and where each kind of
    /// device's member goes in it.
    convenience init?(user target: MappingTarget, shared: [(key: String, value: JSONValue)], holes: [Hole]) {
        let body = JSONWriter.write(.object(shared))
        guard let fid = TargetSplice(.fid, body: body, shared: shared), let token = TargetSplice(.token, body: body, shared: shared) else {
            return nil
        }
        self.init(json: body, holes: holes, limit: FCMLimits.messageBytes, staticTarget: nil, target: target, splices: [fid, token])
    }

    /// One message per device: `out`, the message without a target, with the device's member
    /// spliced in at `fidAt` or `tokenAt`. Throws for no devices or a device of another kind,
    /// which the tree path renders or names the failure of.
    func userMessages(_ out: [UInt8], fidAt: Int, tokenAt: Int, devices: [UserDevice]) throws(MappingFailure) -> [FCMMessage] {
        guard !devices.isEmpty else { throw .noTargets("no devices") }
        var messages: [FCMMessage] = []
        messages.reserveCapacity(devices.count)
        try out.withUnsafeBufferPointer { (out) throws(MappingFailure) in
            for device in devices {
                let splice: TargetSplice
                let at: Int
                switch device.kind {
                case .fid: (splice, at) = (splices[0], fidAt)
                case .token: (splice, at) = (splices[1], tokenAt)
                case .topic, .condition: throw .noTargets("a device of kind \(device.kind.rawValue)")
                }
                var message: [UInt8] = []
                message.reserveCapacity(out.count + splice.before.count + device.id.utf8.count + 2 + splice.after.count)
                message.append(contentsOf: UnsafeBufferPointer(rebasing: out[..<at]))
                message.append(contentsOf: splice.before)
                JSONWriter.writeString(device.id, into: &message)
                message.append(contentsOf: splice.after)
                message.append(contentsOf: UnsafeBufferPointer(rebasing: out[at...]))
                guard message.count <= limit else { throw .tooLarge(bytes: message.count, limit: limit) }
                messages.append(FCMMessage(encoded: message, target: MessageTarget(device.kind, device.id), project: device.app))
            }
        }
        return messages
    }
}
