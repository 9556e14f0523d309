import Foundation
import Mapping
import TestSupport
import Testing

/// The repository root (examples/, schemas/).
let repositoryRoot = Repository.root

func load(_ yaml: String, file: String = "test.yaml") throws -> MappingSet {
    try MappingSet.load(files: [(file, yaml)])
}

/// Loading must fail; returns the errors.
func loadErrors(_ files: [(path: String, contents: String)]) -> [MappingLoadError] {
    do {
        _ = try MappingSet.load(files: files)
        Issue.record("expected load errors")
        return []
    } catch {
        return error.errors
    }
}

func loadErrors(_ yaml: String) -> [MappingLoadError] { loadErrors([("test.yaml", yaml)]) }

/// The clock golden renders run at (2027-01-15T08:00:00Z): a TTL's `apns-expiration` is this + TTL.
let renderNow: Int64 = 1_800_000_000

/// Renders and returns the compact request bodies.
func bodies(_ set: MappingSet, _ json: String, headers: [(name: String, value: [UInt8]?)] = []) throws -> [String] {
    let rendered = try set.render(EventRecord(value: Array(json.utf8), headers: headers, topic: "events", partition: 2, offset: 77), now: renderNow)
        .get()
    return rendered.messages.map { String(decoding: $0.requestBody(), as: UTF8.self) }
}

func failure(_ set: MappingSet, _ json: String) -> MappingFailure? {
    if case .failure(let f) = set.render(EventRecord(value: Array(json.utf8)), now: renderNow) { return f }
    return nil
}

/// The example mappings shipped in examples/mappings.
func exampleMappings() throws -> MappingSet {
    let dir = repositoryRoot + "/examples/mappings"
    let files = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".yaml") }.sorted()
    return try MappingSet.load(files: files.map { ("\(dir)/\($0)", try String(contentsOfFile: "\(dir)/\($0)", encoding: .utf8)) })
}

func exampleEvent(_ name: String) throws -> String {
    try String(contentsOfFile: repositoryRoot + "/examples/events/\(name)", encoding: .utf8)
}
