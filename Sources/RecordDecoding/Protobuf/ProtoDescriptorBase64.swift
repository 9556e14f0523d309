import ExtrasBase64

/// A serialized `FileDescriptorProto` as registries hand it over: standard base64 (RFC 4648 §4),
/// padded or not, possibly broken into lines.
enum ProtoDescriptorBase64 {
    /// Whether every character but ASCII whitespace is one of base64's 65 (with `=`), and there
    /// is at least one.
    static func looksLikeBase64(_ text: String) -> Bool {
        var any = false
        for byte in text.utf8 where !isWhitespace(byte) {
            guard isAlphabet(byte) || byte == UInt8(ascii: "=") else { return false }
            any = true
        }
        return any
    }

    /// The bytes `text` encodes; ASCII whitespace is ignored and padding is optional. Nil when a
    /// character is outside the alphabet, padding is misplaced, or the length is impossible.
    static func decode(_ text: String) -> [UInt8]? {
        var encoded = Array(text.utf8)
        encoded.removeAll(where: isWhitespace)
        // `=` only at the end, completing the last group of four: the decoder alone would take
        // `QQ=` and `QQ=A` for `QQ==`.
        let padding = encoded.reversed().prefix { $0 == UInt8(ascii: "=") }.count
        guard !encoded.dropLast(padding).contains(UInt8(ascii: "=")), padding == 0 || encoded.count % 4 == 0 else { return nil }
        return try? Base64.decode(bytes: encoded, options: .omitPaddingCharacter)
    }

    private static func isAlphabet(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "+"), UInt8(ascii: "/"): true
        default: false
        }
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }
}
