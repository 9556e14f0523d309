import JSON
import RecordDecoding
import Testing

/// `keeping:`: only the members a mapping uses are built; the others are skipped, and skipping
/// must find their end exactly or every later member would decode wrong.
@Suite struct AvroKeepingTests {
    private let complex: AvroSchema
    private let blocked: AvroSchema

    init() throws {
        complex = try AvroSchema(parsing: AvroTestSchemas.complex)
        blocked = try AvroSchema(parsing: AvroTestSchemas.blocked)
    }

    /// The last member, after a string, an enum, a fixed, an array of records holding maps,
    /// a map, and three unions were all skipped.
    @Test func lastMemberAfterSkippingEverything() throws {
        #expect(try AvroTest.decode(complex, AvroFixtures.complex, keeping: AvroTest.keeping("/after")) == AvroTest.json(#"{"after":42}"#))
        #expect(
            try AvroTest.decode(complex, AvroFixtures.complexOtherBranches, keeping: AvroTest.keeping("/after"))
                == AvroTest.json(#"{"after":-42}"#))
        #expect(
            try AvroTest.decode(complex, AvroFixtures.complexLongChoice, keeping: AvroTest.keeping("/after"))
                == AvroTest.json(#"{"after":0}"#))
    }

    @Test func membersInsideUnionsAndRecords() throws {
        let keep = AvroTest.keeping("/previous/sku", "/choice", "/id")
        #expect(
            try AvroTest.decode(complex, AvroFixtures.complex, keeping: keep)
                == AvroTest.json(#"{"id":"o-1","previous":{"sku":"Z"},"choice":"LOST"}"#))
        #expect(
            try AvroTest.decode(complex, AvroFixtures.complexOtherBranches, keeping: keep)
                == AvroTest.json(#"{"id":"o-2","previous":null,"choice":[1,2,3]}"#))
    }

    /// A map keeps only the keys asked for; an array on a kept path is kept whole.
    @Test func mapKeysAndWholeArrays() throws {
        #expect(
            try AvroTest.decode(complex, AvroFixtures.complex, keeping: AvroTest.keeping("/counts/b", "/note"))
                == AvroTest.json(#"{"counts":{"b":-2},"note":null}"#))
        #expect(
            try AvroTest.decode(complex, AvroFixtures.complex, keeping: AvroTest.keeping("/items/0/sku"))
                == AvroTest.json(#"{"items":[{"sku":"A-1","qty":2,"tags":{"color":"red"}},{"sku":"B-2","qty":-1,"tags":{}}]}"#))
        #expect(try AvroTest.decode(complex, AvroFixtures.complex, keeping: AvroTest.keeping("/missing")) == AvroTest.json("{}"))
    }

    @Test func byteSizeBlocksAreSkipped() throws {
        #expect(try AvroTest.decode(blocked, AvroFixtures.blocked, keeping: AvroTest.keeping("/last")) == AvroTest.json(#"{"last":-7}"#))
        #expect(
            try AvroTest.decode(blocked, AvroFixtures.blocked, keeping: AvroTest.keeping("/scores/r", "/last"))
                == AvroTest.json(#"{"scores":{"r":{}},"last":-7}"#))
        #expect(
            try AvroTest.decode(blocked, AvroFixtures.blocked, keeping: AvroTest.keeping("/first", "/scores/p/q"))
                == AvroTest.json(#"{"first":"a","scores":{"p":{"q":1}}}"#))
    }

    /// A skipped block whose writer gave its byte size is jumped over, not read: damage inside
    /// it fails only when its items are decoded.
    @Test func aSkippedSizedBlockIsJumpedOver() throws {
        var bytes = hexBytes(AvroFixtures.blocked)
        #expect(bytes[5] == 0x02)  // the length of "x" in the first block of `lists`
        bytes[5] = 0x7e
        #expect(try blocked.decode(bytes, from: 0, keeping: AvroTest.keeping("/last")) == AvroTest.json(#"{"last":-7}"#))
        #expect(
            AvroTest.failure { _ = try blocked.decode(bytes, from: 0, keeping: .all) }
                == "field /lists/0/0: a string of 63 bytes runs past the end at byte 5")

        bytes = hexBytes(AvroFixtures.blocked)
        #expect(bytes[25] == 0x02)  // the count of scores["p"], a map inside the first block of `scores`
        bytes[25] = 0x7e
        #expect(try blocked.decode(bytes, from: 0, keeping: AvroTest.keeping("/last")) == AvroTest.json(#"{"last":-7}"#))
        // Keeping one key of `scores` reads its entries to find the key, so the damage shows.
        #expect(
            AvroTest.failure { _ = try blocked.decode(bytes, from: 0, keeping: AvroTest.keeping("/scores/r")) }
                == "field /scores/p: a block of 63 items, more than the 11 bytes that remain at byte 25")
    }

    /// Skipped values are checked as finding their end takes (running out of bytes, a bad union
    /// index or length) and as decoding them would (a string's or map key's UTF-8): a record
    /// fails alike whatever is kept.
    @Test func skippedValuesAreCheckedAsDecodingThemWould() throws {
        let keepAfter = AvroTest.keeping("/after")
        // The byte spoiled (what it was), the path kept (all but `/id` skip the spoiled value), the failure.
        let spoiled: [(at: Int, was: Character, keeping: String, failure: String)] = [
            (1, "o", "/id", "field /id: a string that is not valid UTF-8 at byte 0"),
            (1, "o", "/after", "field /id: a string that is not valid UTF-8 at byte 0"),
            (17, "c", "/after", "field /items/0/tags: a map key that is not valid UTF-8 at byte 16"),  // tags: "color": "red"
            (23, "r", "/after", "field /items/0/tags/color: a string that is not valid UTF-8 at byte 22"),
            (36, "a", "/counts/b", "field /counts: a map key that is not valid UTF-8 at byte 35"),  // a key a kept map passes over
        ]
        for (at, was, keeping, failure) in spoiled {
            var bytes = hexBytes(AvroFixtures.complex)
            #expect(bytes[at] == was.asciiValue)
            bytes[at] = 0xff
            #expect(AvroTest.failure { _ = try complex.decode(bytes, from: 0, keeping: AvroTest.keeping(keeping)) } == failure, "\(keeping)")
        }

        var bytes = hexBytes(AvroFixtures.complex)
        bytes[42] = 4
        #expect(
            AvroTest.failure { _ = try complex.decode(bytes, from: 0, keeping: keepAfter) }
                == "field /note: union branch index 2 out of range (2 branches) at byte 42")

        let cut = Array(hexBytes(AvroFixtures.complex).prefix(31))
        #expect(
            AvroTest.failure { _ = try complex.decode(cut, from: 0, keeping: keepAfter) } == "field /items/1/qty: an int runs past the end at byte 31"
        )
        #expect(
            AvroTest.failure { _ = try complex.decode(hexBytes(AvroFixtures.complex) + [0], from: 0, keeping: keepAfter) }
                == "top level: 1 byte left over after the value at byte 56")
    }

    /// The same result as the JSON path: the record decoded whole, written as JSON and parsed
    /// back keeping the same pointers, is what decoding with those pointers gives (up to the
    /// order of members: the writer sorts them).
    @Test(arguments: [
        ["/after"], ["/id", "/status", "/hash"], ["/items"], ["/items/1/tags"], ["/counts/a", "/counts/zz"],
        ["/note", "/previous"], ["/previous/tags/k", "/choice"], [""],
    ])
    func sameAsTheJSONParser(pointers: [String]) throws {
        var keep = JSONPathSet()
        for pointer in pointers { keep.insert(try #require(JSONPointer(pointer)).tokens) }
        for (schema, hex) in [
            (complex, AvroFixtures.complex), (complex, AvroFixtures.complexOtherBranches), (complex, AvroFixtures.complexLongChoice),
        ] {
            let whole = JSONWriter.write(try AvroTest.decode(schema, hex))
            #expect(try sorted(AvroTest.decode(schema, hex, keeping: keep)) == sorted(JSONParser.parse(whole, keeping: keep)))
        }
    }

    private func sorted(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(let members): .object(members.map { ($0.key, sorted($0.value)) }.sorted { $0.0 < $1.0 })
        case .array(let items): .array(items.map(sorted))
        default: value
        }
    }
}
