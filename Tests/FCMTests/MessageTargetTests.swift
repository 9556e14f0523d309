import FCM
import Testing

/// The one type for who a message goes to, shared by the mapping core (which renders it) and the
/// FCM client (which backs off a throttled one): its kinds are the v1 `Message` fields.
@Suite("MessageTarget: the v1 target fields, devices told apart, identifiers out of logs")
struct MessageTargetTests {
    @Test("each kind's raw value is the v1 Message field it fills; fid and token are devices, topic and condition not")
    func kinds() {
        #expect(MessageTarget.Kind.allCases.map(\.rawValue) == ["fid", "token", "topic", "condition"])
        #expect(MessageTarget.Kind.allCases.filter { MessageTarget($0, "x").isDevice } == [.fid, .token])
    }

    @Test("a device shows only its identifier's last 6 characters; a topic or condition shows whole")
    func description() {
        #expect("\(MessageTarget(.token, "bk3RNwTe3H0:CI2k_HHwgIpoDKCIZvvDMExUdFQ3P1"))" == "token …dFQ3P1")
        #expect("\(MessageTarget(.fid, "cYz5ANl0QjePd9BlxiXjt8"))" == "fid …xiXjt8")
        #expect("\(MessageTarget(.topic, "news"))" == "topic news")
        #expect("\(MessageTarget(.condition, "'a' in topics"))" == "condition 'a' in topics")
    }

    @Test("targets are equal only with the same kind and value")
    func identity() {
        #expect(MessageTarget(.token, "a") == MessageTarget(.token, "a"))
        #expect(MessageTarget(.token, "a") != MessageTarget(.fid, "a"))
        #expect(Set([MessageTarget(.topic, "a"), MessageTarget(.condition, "a"), MessageTarget(.topic, "a")]).count == 2)
    }
}
