/// Turns a schema text and its references into ``ProtoFile``s: the schema's own file and every
/// file it imports, directly or not.
///
/// Each text is either a base64 serialized `FileDescriptorProto` or `.proto` source. The rule:
/// a text whose characters are all base64's (A–Z a–z 0–9 + / =, whitespace aside) is read as a
/// descriptor first; if that fails, or any other character occurs, it is read as source. Every
/// `.proto` file that declares anything contains `;` or `{`, which base64 never does, so real
/// source never takes the first path, and the fallback covers the degenerate rest (a file of
/// comments only, say). When both readings fail, the error gives both reasons.
///
/// Imports are looked up by path: the files serializers never register (``builtIn(_:)``:
/// `google/protobuf/*.proto`, `google/type/*.proto`, Confluent's) are built in and win over a
/// reference of the same name; then `references`. Files are loaded
/// dependencies first; an import cycle or a missing import is a SchemaError naming the path.
struct ProtoSchemaLoader {
    /// What a schema given as `.proto` text is called when it imports nothing that names it.
    static let mainName = "schema.proto"

    private let references: [String: String]
    private var loaded: [String: ProtoFile] = [:]
    /// Loaded import paths, each after those it imports.
    private(set) var order: [String] = []
    private var inProgress: [String] = []

    init(references: [(name: String, text: String)]) {
        var byName: [String: String] = [:]
        for reference in references where byName[reference.name] == nil { byName[reference.name] = reference.text }
        self.references = byName
    }

    /// The files loaded so far, in ``order``.
    var files: [ProtoFile] { order.compactMap { loaded[$0] } }

    mutating func loadMain(_ text: String) throws(SchemaError) -> ProtoFile {
        try read(text, path: nil)
    }

    /// The file imported as `path`, loading it (and what it imports) the first time.
    private mutating func load(_ path: String, importedBy importer: String) throws(SchemaError) -> ProtoFile {
        if let file = loaded[path] { return file }
        if inProgress.contains(path) {
            throw SchemaError("import cycle: \((inProgress + [path]).joined(separator: " -> "))")
        }
        let file: ProtoFile
        if let builtIn = Self.builtIn(path) {
            file = builtIn
            try loadDependencies(of: builtIn)
        } else if let text = references[path] {
            file = try read(text, path: path)
        } else {
            throw SchemaError("\(importer) imports \(path), which is neither among the schema's references nor built in\(Self.hint(path))")
        }
        loaded[path] = file
        order.append(path)
        return file
    }

    /// The file pushbridge builds in for `path`, if any: the well-known types, the rest of
    /// `google/protobuf/` that Confluent's registry knows, Confluent's own, and `google/type/`.
    static func builtIn(_ path: String) -> ProtoFile? {
        ProtoWellKnownFiles.file(path) ?? ProtoApiFiles.file(path) ?? ProtoGoogleTypeFiles.file(path)
    }

    /// Why a missing import is missing: serializers never register the folders they take for
    /// built in, so one of those pushbridge lacks is not the producer's doing.
    private static func hint(_ path: String) -> String {
        guard ["google/protobuf/", "google/type/", "confluent/"].contains(where: { path.hasPrefix($0) }) else {
            return " (the schema was registered without a reference of that name)"
        }
        return " (serializers never register files under google/protobuf/, google/type/ or confluent/, and pushbridge does not build this one in)"
    }

    /// Reads one text in either form; `path` is its import path (nil for the schema itself).
    private mutating func read(_ text: String, path: String?) throws(SchemaError) -> ProtoFile {
        let label = path ?? "the schema"
        var descriptorFailure: SchemaError?
        var descriptor: ProtoFile?
        if ProtoDescriptorBase64.looksLikeBase64(text) {
            if let bytes = ProtoDescriptorBase64.decode(text) {
                do { descriptor = try ProtoDescriptorReader.read(bytes) } catch { descriptorFailure = error }
            } else {
                descriptorFailure = SchemaError("its base64 does not decode")
            }
        }
        if var file = descriptor {
            file.name = path ?? (file.name.isEmpty ? Self.mainName : file.name)
            try loadDependencies(of: file)
            return file
        }
        let name = path ?? Self.mainName
        inProgress.append(name)
        defer { inProgress.removeLast() }
        var imports: [ProtoFile] = []
        for dependency in ProtoImportScanner.imports(text) { imports.append(try load(dependency, importedBy: name)) }
        let file: ProtoFile
        do {
            file = try ProtoTextParser.parse(text, name: name, imports: closure(of: imports))
        } catch {
            if let descriptorFailure {
                throw SchemaError(
                    "\(label) is neither a serialized FileDescriptorProto (\(descriptorFailure.description)) nor .proto text (\(error.description))")
            }
            throw SchemaError("\(label): \(error.description)")
        }
        for dependency in file.dependencies { _ = try load(dependency, importedBy: name) }
        return file
    }

    private mutating func loadDependencies(of file: ProtoFile) throws(SchemaError) {
        inProgress.append(file.name)
        defer { inProgress.removeLast() }
        for dependency in file.dependencies { _ = try load(dependency, importedBy: file.name) }
    }

    /// `files` and everything they import, directly or not (public imports reach through, so
    /// the parser is given the whole closure).
    private func closure(of files: [ProtoFile]) -> [ProtoFile] {
        var seen: Set<String> = []
        var result: [ProtoFile] = []
        var stack = Array(files.reversed())
        while let file = stack.popLast() {
            guard seen.insert(file.name).inserted else { continue }
            result.append(file)
            for dependency in file.dependencies.reversed() { if let next = loaded[dependency] { stack.append(next) } }
        }
        return result
    }
}
