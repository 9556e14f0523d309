/// What one platform's format strings allow within the grammar ``FormatScanner`` reads,
/// `%[index$][flags][width][.precision][length]conversion`: the differences between Java's
/// `Formatter` (``JavaFormat/grammar``) and C's `printf` (``AppleFormat/grammar``), as data.
struct FormatGrammar: Sendable {
    /// What a `.` with no digits after it is.
    enum BarePeriod: Sendable {
        /// No precision: the `.` stands where the conversion belongs, and is none (Java).
        case unknownConversion
        /// A precision of 0, as are digits no `Int` holds (C).
        case zeroPrecision
    }

    /// The flag characters, taken in any order and number after the index.
    var flags: Set<Character>
    /// Whether `*` may stand for the width and for the precision, each taking an argument (C).
    var starAmounts: Bool
    var barePeriod: BarePeriod
    /// Length modifiers (C's `l`, `ll`, `h` …); of two that start alike, the longer comes first.
    var lengthModifiers: [String]
    /// The conversion characters, `%` and `n` included where the platform has them.
    var conversions: Set<Character>
    /// Conversions that a second character completes (Java's `%tY`, `%TH`): not in `conversions`.
    var dateTimeConversions: Set<Character> = []
    /// The characters that complete a date-time conversion.
    var dateTimeSuffixes: Set<Character> = []
}

/// One specifier as written, before a platform's rules give it an argument.
struct ScannedSpecifier: Sendable, Equatable {
    /// As written, e.g. `%1$-10ld`.
    var text: String
    /// The `n$` written (`0$` included); nil if none, or too long for an `Int`.
    var index: Int?
    var flags = ""
    var width: Int?
    var precision: Int?
    /// How many `*` it has (for the width, the precision): each takes an argument of its own.
    var stars = 0
    /// The length modifier, empty if none.
    var length = ""
    var conversion: Character
    /// The character completing a date-time conversion (`Y` of `%tY`).
    var dateTimeSuffix: Character?

    /// The specifier taking `argument` (nil: none), all else as written.
    func specifier(argument: Int?, isPositional: Bool) -> FormatSpecifier {
        var specifier = FormatSpecifier(
            text: text, argument: argument, isPositional: isPositional, conversion: conversion, flags: flags, width: width,
            precision: precision)
        specifier.length = length
        specifier.dateTimeSuffix = dateTimeSuffix
        return specifier
    }
}

/// A `%` that the grammar cannot read to a conversion.
struct FormatScanError: Error, Sendable, Equatable {
    /// The specifier as far as it was read, what was found included.
    var text: String
    /// What stood where the conversion belongs (`q`, `.`, `tX`); nil at the end of the string.
    var found: String?
}
