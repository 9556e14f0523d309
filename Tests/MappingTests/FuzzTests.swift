import Mapping
import TestSupport
import Testing

/// Issue 8's fuzzing: generated malformed inputs through the event decoder and the mapping core
/// (MappingSet.render, as the pipeline calls it). Zero crashes, and every failure is a
/// classified MappingFailure with a reason, so the pipeline can dead-letter it.
@Suite("Fuzz: malformed events through the decoder and the mapping core")
struct FuzzTests {
    static let inputs = 12_000
    static let seed: UInt64 = 0x5EED_0008

    @Test("12,000 generated malformed inputs: no crash; each renders or fails with its expected code and a reason")
    func malformedInputs() throws {
        let set = try exampleMappings()
        var rng = SplitMix64(seed: Self.seed)
        var outcomes: [String: Int] = [:]
        var byKind: [MalformedEvent.Kind: Int] = [:]
        var wrong: [String] = []
        for i in 0..<Self.inputs {
            let input = MalformedEvent.generate(i, using: &rng)
            byKind[input.kind, default: 0] += 1
            let record = EventRecord(value: input.value, headers: input.headers, topic: "fuzz", partition: 0, offset: Int64(i))
            switch set.render(record) {
            case .success:
                outcomes["rendered", default: 0] += 1
                if input.expectedFailures != nil { wrong.append("#\(i) \(input.kind): rendered, expected \(input.expectedFailures!.sorted())") }
            case .failure(let failure):
                outcomes[failure.code, default: 0] += 1
                if failure.reason.isEmpty { wrong.append("#\(i) \(input.kind): \(failure.code) without a reason") }
                if let expected = input.expectedFailures, !expected.contains(failure.code) {
                    wrong.append("#\(i) \(input.kind): \(failure.code) (\(failure.reason.prefix(120))), expected \(expected.sorted())")
                }
            }
        }
        // The figures issue 8 asks for, as `name: value` lines.
        print("fuzz_inputs: \(Self.inputs)")
        for (code, n) in outcomes.sorted(by: { $0.key < $1.key }) { print("fuzz_\(code): \(n)") }
        print("fuzz_crashes: 0")
        #expect(byKind.count == MalformedEvent.Kind.allCases.count && byKind.values.allSatisfy { $0 >= 1_000 })
        #expect(wrong.isEmpty, "\(wrong.count) unexpected outcomes (seed \(Self.seed)):\n\(wrong.prefix(20).joined(separator: "\n"))")
        #expect(outcomes.values.reduce(0, +) == Self.inputs)
    }
}
