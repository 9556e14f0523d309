#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The parts of a document that some pointer reaches: a tree of member names, where a node
/// marked `whole` keeps its entire value.
///
/// The parser keeps only these parts, so an event's unused fields cost a validating skip
/// rather than a string or an array each. The mapping set builds one from every pointer its
/// mappings use.
package struct JSONPathSet: Sendable, Equatable {
    /// Keep this value entirely (a pointer ends here, or an array is on the way).
    package var whole = false
    /// Member name (as UTF-8) → what to keep of that member's value.
    package var members: [(name: [UInt8], paths: JSONPathSet)] = []

    package static func == (a: JSONPathSet, b: JSONPathSet) -> Bool {
        a.whole == b.whole && a.members.count == b.members.count
            && zip(a.members, b.members).allSatisfy { $0.name == $1.name && $0.paths == $1.paths }
    }

    /// Everything.
    package static let all = JSONPathSet(whole: true)

    /// Adds the value `tokens` leads to. An array index cannot be told from a member name in
    /// a pointer, so an array on the way is kept whole (see the parser).
    package init(whole: Bool = false) { self.whole = whole }

    package mutating func insert<S: Sequence<String>>(_ tokens: S) {
        var iterator = tokens.makeIterator()
        insert(&iterator)
    }

    private mutating func insert<I: IteratorProtocol<String>>(_ tokens: inout I) {
        guard !whole else { return }
        guard let token = tokens.next() else {
            whole = true
            members = []
            return
        }
        let name = Array(token.utf8)
        if let i = members.firstIndex(where: { $0.name == name }) {
            members[i].paths.insert(&tokens)
        } else {
            var child = JSONPathSet()
            child.insert(&tokens)
            members.append((name, child))
        }
    }

    /// What to keep of the member whose raw (unescaped) name is `name`, or nil to skip it.
    package func member(_ name: UnsafeBufferPointer<UInt8>) -> JSONPathSet? {
        for m in members where m.name.count == name.count {
            let equal = m.name.withUnsafeBufferPointer { candidate in
                name.isEmpty || memcmp(candidate.baseAddress!, name.baseAddress!, name.count) == 0
            }
            if equal { return m.paths }
        }
        return nil
    }
}
