import DeviceRegistry
import Foundation
import TestSupport
import Testing

/// schemas/registry-record.schema.json, checked with Python's jsonschema (Draft 2020-12), against
/// what ``RegistryRecord`` accepts whole (a record whose preference member it leaves out is one
/// the schema calls invalid): the two must agree on every record here.
@Suite("schemas/registry-record.schema.json agrees with the parser")
struct RegistrySchemaTests {
    static let script = """
        import json, sys, jsonschema
        schema = json.load(open(sys.argv[1]))
        jsonschema.Draft202012Validator.check_schema(schema)
        v = jsonschema.Draft202012Validator(schema)
        for path in sys.argv[2:]:
            print("valid" if not list(v.iter_errors(json.load(open(path)))) else "invalid")
        """

    static let records = [
        #"{"devices": []}"#,
        #"{"devices": [{"token": "t", "platform": "android", "app": "consumer", "labels": {"lang": "de"}}]}"#,
        #"{"devices": [{"fid": "f", "platform": "ios"}, {"token": "t", "platform": "web", "app": null, "labels": null}]}"#,
        #"{"devices": [{"token": "t", "model": "Pixel"}], "updated_at": "2026-01-01"}"#,
        #"{}"#,
        #"[]"#,
        #"{"devices": {}}"#,
        #"{"devices": [{"fid": "f", "token": "t"}]}"#,
        #"{"devices": [{"platform": "ios"}]}"#,
        #"{"devices": [{"token": ""}]}"#,
        #"{"devices": [{"token": "t", "platform": "tizen"}]}"#,
        #"{"devices": [{"token": "t", "app": ""}]}"#,
        #"{"devices": [{"token": "t", "labels": {"lang": 1}}]}"#,
        #"{"devices": [{"token": 7}]}"#,
        #"{"devices": [{"token": "t", "muted": ["social"]}], "time_zone": "America/Argentina/Buenos_Aires", "muted": ["marketing", "news.digest"], "quiet_hours": {"from": "22:00", "to": "07:30"}}"#,
        #"{"devices": [], "time_zone": null, "muted": null, "quiet_hours": "off"}"#,
        #"{"devices": [], "quiet_hours": null}"#,
        #"{"devices": [], "time_zone": "Etc/GMT+3"}"#,
        #"{"devices": [], "time_zone": "Europe/../Berlin"}"#,
        #"{"devices": [], "time_zone": 3}"#,
        #"{"devices": [], "muted": ["Marketing"]}"#,
        #"{"devices": [], "muted": ["a", "a"]}"#,
        #"{"devices": [], "quiet_hours": {"from": "22:00", "to": "7:30"}}"#,
        #"{"devices": [], "quiet_hours": {"from": "22:00", "to": "07:30", "days": 5}}"#,
        #"{"devices": [], "quiet_hours": "on"}"#,
        #"{"devices": [{"token": "t", "muted": "social"}]}"#,
    ]

    @Test("each record: valid for the schema exactly when the parser takes it; the example is valid")
    func agree() async throws {
        let folder = try TemporaryFolder()
        var files: [String] = []
        for (i, record) in Self.records.enumerated() {
            let path = folder.path("r\(i).json")
            try record.write(toFile: path, atomically: true, encoding: .utf8)
            files.append(path)
        }
        let example = Repository.root + "/examples/registry/user-42.json"
        let (status, output) = try await ChildProcess.run(
            "/usr/bin/env", ["python3", "-c", Self.script, Repository.root + "/schemas/registry-record.schema.json"] + files + [example])
        #expect(status == 0, "\(output)")
        let verdicts = output.split(separator: "\n").map(String.init)
        try #require(verdicts.count == files.count + 1, "\(output)")
        for (i, record) in Self.records.enumerated() {
            let parsed = RegistryRecord.parse(key: Array("u".utf8), value: Array(record.utf8))
            let parserTakes = if case .success(let update) = parsed { update.droppedPreferences.isEmpty } else { false }
            #expect((verdicts[i] == "valid") == parserTakes, "\(record): schema \(verdicts[i]), parser \(parsed)")
        }
        #expect(verdicts.last == "valid")
        let exampleBytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: example)))
        #expect(try RegistryRecord.parse(key: Array("user-42".utf8), value: exampleBytes).get().devices?.count == 2)
    }
}
