/// Reads an iOS `.stringsdict` (an XML property list). Each top-level key becomes an entry:
/// a plural rule (`NSStringPluralRuleType`) makes it a ``ResourceEntry/Kind/stringsdictPlural``
/// (loc args are strings, so iOS cannot pick a plural form from them); device-specific
/// (`NSStringDeviceSpecificRuleType`, the iPhone text is kept) and width variants
/// (`NSStringVariableWidthRuleType`, the widest is kept) become plain strings.
public enum StringsDictParser {
    /// - Throws: ``ResourceProblem`` (file:line) if the file is not a property list dictionary.
    public static func parse(_ bytes: [UInt8], file: String) throws(ResourceProblem) -> ParsedResources {
        guard let utf8 = TextDecoding.utf8Bytes(bytes) else {
            throw ResourceProblem(.error, SourceLocation(file: file, line: 1), "not UTF-8 or UTF-16 text")
        }
        let plist: PropertyList
        do {
            plist = try PropertyList.parse(try XMLElement.parseDocument(utf8))
        } catch {
            throw ResourceProblem(.error, SourceLocation(file: file, line: error.line), "invalid property list: \(error.message)")
        }
        guard case .dictionary(let entries) = plist else {
            throw ResourceProblem(.error, SourceLocation(file: file, line: 1), "the property list is not a dictionary")
        }
        var result = ParsedResources()
        for (key, value, line) in entries {
            let location = SourceLocation(file: file, line: line)
            if let format = value["NSStringLocalizedFormatKey"]?.string, let plural = pluralVariable(value) {
                // The `other` form stands for the entry in messages.
                let other = plural["other"]?.string ?? format
                result.entries.append(ResourceEntry(key: key, kind: .stringsdictPlural, value: other, location: location))
            } else if case .dictionary(let devices)? = value["NSStringDeviceSpecificRuleType"] {
                let text =
                    (value["NSStringDeviceSpecificRuleType"]?["iphone"] ?? value["NSStringDeviceSpecificRuleType"]?["other"] ?? devices.first?.value)?
                    .string
                result.entries.append(ResourceEntry(key: key, kind: .string, value: text ?? "", location: location))
            } else if case .dictionary(let widths)? = value["NSStringVariableWidthRuleType"] {
                let widest = widths.max { (Int($0.key) ?? 0) < (Int($1.key) ?? 0) }
                result.entries.append(ResourceEntry(key: key, kind: .string, value: widest?.value.string ?? "", location: location))
            } else {
                result.problems.append(ResourceProblem(.warning, location, "\"\(key)\": not a plural, device or width rule; ignored", key: key))
            }
        }
        return result
    }

    /// The first variable dictionary of an entry that is a plural rule.
    private static func pluralVariable(_ entry: PropertyList) -> PropertyList? {
        guard case .dictionary(let members) = entry else { return nil }
        return members.first { $0.value["NSStringFormatSpecTypeKey"]?.string == "NSStringPluralRuleType" }?.value
    }
}
