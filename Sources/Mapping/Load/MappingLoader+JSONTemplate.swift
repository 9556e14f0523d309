import Yams

// Typed JSON in a mapping (``JSONTemplate``): a Live Activity's `content_state` and `attributes`.
extension MappingLoader {
    /// A YAML map, list or scalar as JSON the app decodes. A map whose keys are `field` and any
    /// of `default`, `optional` and `as` takes the event's value; `{value: x}` is `x` as written.
    mutating func jsonTemplate(_ node: Node, _ what: String) -> JSONTemplate? {
        switch node {
        case .scalar(let s):
            if s.style == .plain, ["yes", "no", "on", "off", "y", "n"].contains(s.string.lowercased()) {
                warn(
                    node, "\(what) is the string \"\(s.string)\", not a boolean (YAML 1.2)",
                    hint: "write true or false for a boolean, or quote it to keep the string")
            }
            return .json(Self.coreJSON(s))
        case .sequence(let list):
            var items: [JSONTemplate] = []
            for (i, item) in list.enumerated() { if let t = jsonTemplate(item, "\(what)[\(i)]") { items.append(t) } }
            return .array(items)
        case .mapping(let m):
            let keys = Array(m.keys.compactMap { $0.scalar?.string })
            if keys.contains("field"), Set(keys).isSubset(of: ["field", "default", "optional", "as"]) { return typedField(m, what) }
            if keys == ["value"], let value = m["value"] { return .json(Self.coreJSON(value)) }
            var members: [JSONTemplate.Member] = []
            for (k, v) in m {
                guard let key = k.scalar?.string else {
                    fail(k, "a key in \(what) must be a string")
                    continue
                }
                if let t = jsonTemplate(v, "\(what).\(key)") { members.append(JSONTemplate.Member(key: key, value: t)) }
            }
            return .object(members)
        default:
            fail(node, "\(what) must be a map, a list or a scalar")
            return nil
        }
    }

    private mutating func typedField(_ m: Node.Mapping, _ what: String) -> JSONTemplate? {
        guard let pointer = pointer(m["field"]!) else { return nil }
        var conversion = JSONTemplate.Conversion.none
        if let n = m["as"] {
            guard let c = n.scalar.flatMap({ JSONTemplate.Conversion(rawValue: $0.string) }) else {
                fail(n, "`as` in \(what) must be one of " + JSONTemplate.Conversion.allCases.map(\.rawValue).joined(separator: ", "))
                return nil
            }
            conversion = c
        }
        let optional = m["optional"].flatMap { bool($0) } ?? false
        var fallback: JSONValue?
        if let d = m["default"] {
            if optional {
                fail(d, "\(what) has both `default` and `optional: true`", hint: "a default fills a missing field; optional leaves the member out")
            }
            do throws(MappingFailure) {
                fallback = try JSONTemplate.convert(Self.coreJSON(d), conversion, field: "default")
            } catch {
                fail(d, "the default of \(what) is not what `as: \(conversion.rawValue)` makes: \(error.reason)")
            }
        }
        return .field(pointer, default: fallback, optional: optional, conversion: conversion)
    }

    /// A YAML value as JSON, its plain scalars read by YAML 1.2's core schema.
    static func coreJSON(_ node: Node) -> JSONValue {
        switch node {
        case .scalar(let s): coreJSON(s)
        case .sequence(let list): .array(list.map { coreJSON($0) })
        case .mapping(let m): .object(m.map { ($0.key.scalar?.string ?? "", coreJSON($0.value)) })
        default: .null
        }
    }

    /// A plain scalar by YAML 1.2's core schema (null, true/false, integers, floats); any other
    /// text, and every quoted scalar, a string. Unlike YAML 1.1, `yes`, `no`, `on` and `off` are
    /// strings.
    static func coreJSON(_ s: Node.Scalar) -> JSONValue {
        guard s.style == .plain else { return .string(s.string) }
        let text = s.string
        switch text {
        case "", "~", "null", "Null", "NULL": return .null
        case "true", "True", "TRUE": return .bool(true)
        case "false", "False", "FALSE": return .bool(false)
        default: break
        }
        let digits = text.first == "-" || text.first == "+" ? text.dropFirst() : Substring(text)
        if !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber) {
            if let i = Int64(text) { return .int(i) }
            return .bigInteger(text.first == "+" ? String(text.dropFirst()) : text)
        }
        let isFloat = !digits.isEmpty && digits.allSatisfy { $0.isASCII && ($0.isNumber || ".eE+-".contains($0)) } && digits.first != "e"
        if isFloat, let d = Double(text), d.isFinite { return .double(d) }
        return .string(text)
    }
}
