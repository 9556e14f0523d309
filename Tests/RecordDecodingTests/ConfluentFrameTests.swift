import Testing

@testable import RecordDecoding

@Suite struct ConfluentFrameTests {
    @Test func readsTheMagicByteAndTheBigEndianID() throws {
        let frame = try #require(ConfluentFrame([0, 0x00, 0x01, 0x02, 0x03, 0xAA]))
        #expect(frame.schemaID == 0x0001_0203)
        #expect(frame.bodyOffset == 5)
        #expect(ConfluentFrame([1, 0, 0, 0, 1]) == nil)
        #expect(ConfluentFrame([0, 0, 0, 1]) == nil)
        #expect(ConfluentFrame.isFramed([0]))
        #expect(!ConfluentFrame.isFramed(Array("{\"type\":1}".utf8)))
    }

    @Test func messageIndexesFollowConfluentsRule() throws {
        // A single 0 byte: the count is zero, meaning the first message.
        #expect(try ConfluentFrame.messageIndexes([0, 0, 0, 0, 1, 0, 0x0A], from: 5) == ([0], 6))
        // Count 2 (zigzag 4), indexes 1 (zigzag 2) and 0: the first nested message of the second.
        #expect(try ConfluentFrame.messageIndexes([4, 2, 0, 0x0A], from: 0) == ([1, 0], 3))
        // Index 300: zigzag 600 = 0xD8 0x04.
        #expect(try ConfluentFrame.messageIndexes([2, 0xD8, 0x04], from: 0) == ([300], 3))
    }

    @Test func brokenIndexListsAreErrorsThatSayWhere() {
        #expect(throws: SchemaError.self) { try ConfluentFrame.messageIndexes([], from: 0) }
        #expect(throws: SchemaError.self) { try ConfluentFrame.messageIndexes([4, 2], from: 0) }  // one index of two
        #expect(throws: SchemaError.self) { try ConfluentFrame.messageIndexes([1], from: 0) }  // a negative count
        #expect(throws: SchemaError.self) { try ConfluentFrame.messageIndexes([0x80, 0x80], from: 0) }  // a varint cut off
        #expect(throws: SchemaError.self) { try ConfluentFrame.messageIndexes(Array(repeating: 0xFF, count: 11), from: 0) }
        #expect(throws: SchemaError.self) { try ConfluentFrame.messageIndexes([2, 1], from: 0) }  // index -1
    }
}
