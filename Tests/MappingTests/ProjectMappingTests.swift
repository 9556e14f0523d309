import Mapping
import Testing

/// `project`: which Firebase project a mapping's messages go with, fixed or from the event.
@Suite("project: choosing the Firebase project per event type")
struct ProjectMappingTests {
    static let yaml = """
        version: 1
        events:
          fixed:
            project: driver
            target: {token: {field: /token}}
            body: {key: b}
          from_field:
            project: {field: /app, default: consumer}
            target: {token: {field: /token}}
            body: {key: b}
          strict:
            project: {field: /app}
            target: {token: {field: /token}}
            body: {key: b}
          plain:
            target: {token: {field: /token}}
            body: {key: b}
        """

    static func project(_ set: MappingSet, _ json: String) throws -> String? {
        try set.render(EventRecord(value: Array(json.utf8)), now: renderNow).get().project
    }

    @Test("a fixed name, a field with its default, none; a field without a default fails as any missing field does")
    func render() throws {
        let set = try load(Self.yaml)
        #expect(try Self.project(set, #"{"type":"fixed","token":"t"}"#) == "driver")
        #expect(try Self.project(set, #"{"type":"from_field","token":"t","app":"brand-7"}"#) == "brand-7")
        #expect(try Self.project(set, #"{"type":"from_field","token":"t"}"#) == "consumer")
        #expect(try Self.project(set, #"{"type":"plain","token":"t"}"#) == nil)
        #expect(try Self.project(set, #"{"type":"strict","token":"t","app":7}"#) == "7", "stringified as any field")
        #expect(failure(set, #"{"type":"strict","token":"t"}"#) == .missingField(field: "/app", role: "project"))
        // The project does not change the message itself.
        #expect(try bodies(set, #"{"type":"fixed","token":"t"}"#) == bodies(set, #"{"type":"plain","token":"t"}"#))
    }

    @Test("where each mapping chooses its project, for the worker's start-up check")
    func choices() throws {
        let choices = try load(Self.yaml).projectChoices
        #expect(
            choices.map { "\($0.eventType):\($0.line):\($0.name ?? "-"):\($0.field ?? "-")" } == [
                "fixed:3:driver:-", "from_field:7:consumer:/app", "strict:11:-:/app", "plain:15:-:-",
            ])
    }

    @Test("a name a project cannot have, or the event ID, is refused at its line")
    func refused() {
        let e = loadErrors(
            Self.yaml.replacingOccurrences(of: "project: driver", with: "project: \"two words\"")
                .replacingOccurrences(of: "project: {field: /app}", with: "project: {from: event_id}"))
        #expect(
            e.map(\.description) == [
                "test.yaml:4:14: error: project \"two words\" is not a project name\n    hint: name one of the config's fcm.projects: letters, digits, - _ .",
                "test.yaml:12:14: error: project cannot be the event's ID\n    hint: name one of the config's fcm.projects, or `{field: /pointer}`",
            ])
    }
}
