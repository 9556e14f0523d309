import ArgumentParser
import Foundation
import Mapping

/// Reads mapping files from paths: files as given, directories for their *.yaml, *.yml and
/// *.json files (sorted, not recursive).
enum MappingFiles {
    struct ReadError: Error, CustomStringConvertible {
        let description: String
    }

    static func read(_ paths: [String]) throws -> [(path: String, contents: String)] {
        var files: [(path: String, contents: String)] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw ReadError(description: "\(path): no such file or directory")
            }
            let list: [String]
            if isDirectory.boolValue {
                list = try FileManager.default.contentsOfDirectory(atPath: path)
                    .filter { $0.hasSuffix(".yaml") || $0.hasSuffix(".yml") || $0.hasSuffix(".json") }
                    .sorted()
                    .map { (path as NSString).appendingPathComponent($0) }
                if list.isEmpty { throw ReadError(description: "\(path): no .yaml, .yml or .json files") }
            } else {
                list = [path]
            }
            for file in list {
                guard let data = FileManager.default.contents(atPath: file) else { throw ReadError(description: "\(file): cannot read") }
                guard let text = String(data: data, encoding: .utf8) else { throw ReadError(description: "\(file): not UTF-8") }
                files.append((file, text))
            }
        }
        return files
    }

    /// Loads, or prints every error to stderr and exits 1. Warnings go to stderr too, unless
    /// the caller reports them itself (`run` logs them as JSON lines).
    static func load(_ paths: [String], printingWarnings: Bool = true) throws -> MappingSet {
        do {
            let set = try MappingSet.load(files: try read(paths))
            if printingWarnings { printWarnings(set) }
            return set
        } catch let errors as MappingLoadErrors {
            printErrors(errors)
            throw ExitCode(1)
        }
    }

    static func printWarnings(_ set: MappingSet) {
        for w in set.warnings { FileHandle.standardError.write(Data("\(w)\n".utf8)) }
    }

    static func printErrors(_ errors: MappingLoadErrors) {
        for e in errors.errors { FileHandle.standardError.write(Data("\(e)\n".utf8)) }
        let n = errors.errors.count
        FileHandle.standardError.write(Data("\(n) error\(n == 1 ? "" : "s")\n".utf8))
    }
}
