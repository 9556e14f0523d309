/// Splits a format string into literal text and specifiers, one piece at a time, by the grammar
/// Java's `Formatter` and C's `printf` (Apple's `String(format:)`) share:
/// `%[index$][flags][width][.precision][length]conversion`, each platform's differences given
/// as a ``FormatGrammar``. Which argument a specifier takes, and what a platform refuses beyond
/// the grammar, are the caller's (``JavaFormat``, ``AppleFormat``).
struct FormatScanner {
    /// Literal text up to the next `%` (never empty), or a specifier.
    enum Piece: Sendable, Equatable {
        case literal(String)
        case specifier(ScannedSpecifier)
    }

    private let chars: [Character]
    private let grammar: FormatGrammar
    private var i = 0

    init(_ format: String, grammar: FormatGrammar) {
        chars = Array(format)
        self.grammar = grammar
    }

    /// The next piece, or nil at the end of the string.
    /// - Throws: ``FormatScanError`` for a `%` that does not lead to a conversion.
    mutating func next() throws(FormatScanError) -> Piece? {
        guard i < chars.count else { return nil }
        guard chars[i] == "%" else {
            let start = i
            while i < chars.count, chars[i] != "%" { i += 1 }
            return .literal(String(chars[start..<i]))
        }
        return .specifier(try specifier())
    }

    /// Splits the whole of `format`, giving each specifier in turn to `resolve`, which numbers its
    /// argument and applies the platform's rules.
    /// - Returns: the segments, or the first failure in the string: `resolve`'s, or `scanFailure`'s
    ///   for a specifier the grammar cannot read.
    static func segments<Failure: Error>(
        of format: String, grammar: FormatGrammar, scanFailure: (FormatScanError) -> Failure,
        resolve: (ScannedSpecifier) -> Result<FormatSpecifier, Failure>
    ) -> Result<[FormatSegment], Failure> {
        var scanner = FormatScanner(format, grammar: grammar)
        var segments: [FormatSegment] = []
        do {
            while let piece = try scanner.next() {
                switch piece {
                case .literal(let text):
                    segments.append(.literal(text))
                case .specifier(let scanned):
                    switch resolve(scanned) {
                    case .success(let specifier): segments.append(.specifier(specifier))
                    case .failure(let failure): return .failure(failure)
                    }
                }
            }
        } catch {
            return .failure(scanFailure(error))
        }
        return .success(segments)
    }

    private mutating func specifier() throws(FormatScanError) -> ScannedSpecifier {
        let start = i
        i += 1
        var s = ScannedSpecifier(text: "", conversion: "%")
        // [index$]
        let indexEnd = digitsEnd(from: i)
        if indexEnd > i, indexEnd < chars.count, chars[indexEnd] == "$" {
            s.index = Int(String(chars[i..<indexEnd]))
            i = indexEnd + 1
        }
        // [flags]
        while i < chars.count, grammar.flags.contains(chars[i]) {
            s.flags.append(chars[i])
            i += 1
        }
        // [width]
        if grammar.starAmounts, i < chars.count, chars[i] == "*" {
            s.stars += 1
            i += 1
        } else if digitsEnd(from: i) > i {
            let end = digitsEnd(from: i)
            s.width = Int(String(chars[i..<end]))
            i = end
        }
        // [.precision]
        if i < chars.count, chars[i] == "." {
            if grammar.starAmounts, i + 1 < chars.count, chars[i + 1] == "*" {
                s.stars += 1
                i += 2
            } else {
                let end = digitsEnd(from: i + 1)
                let digits = String(chars[(i + 1)..<end])
                switch grammar.barePeriod {
                case .unknownConversion:
                    guard !digits.isEmpty else { throw FormatScanError(text: String(chars[start...i]), found: ".") }
                    s.precision = Int(digits)
                case .zeroPrecision:
                    s.precision = Int(digits) ?? 0
                }
                i = end
            }
        }
        // [length]
        for modifier in grammar.lengthModifiers where String(chars[i..<min(i + modifier.count, chars.count)]) == modifier {
            s.length = modifier
            i += modifier.count
            break
        }
        // conversion
        guard i < chars.count else { throw FormatScanError(text: String(chars[start...]), found: nil) }
        s.conversion = chars[i]
        i += 1
        if grammar.dateTimeConversions.contains(s.conversion) {
            guard i < chars.count else { throw FormatScanError(text: String(chars[start...]), found: String(s.conversion)) }
            guard grammar.dateTimeSuffixes.contains(chars[i]) else {
                throw FormatScanError(text: String(chars[start...i]), found: "\(s.conversion)\(chars[i])")
            }
            s.dateTimeSuffix = chars[i]
            i += 1
        } else if !grammar.conversions.contains(s.conversion) {
            throw FormatScanError(text: String(chars[start..<i]), found: String(s.conversion))
        }
        s.text = String(chars[start..<i])
        return s
    }

    /// Where the run of ASCII digits from `start` ends.
    private func digitsEnd(from start: Int) -> Int {
        var end = start
        while end < chars.count, chars[end].isASCII, chars[end].isNumber { end += 1 }
        return end
    }
}
