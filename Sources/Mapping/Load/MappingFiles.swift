import Foundation

/// Reads mapping files from paths: files as given, directories for their *.yaml, *.yml and
/// *.json files (sorted, not recursive).
public enum MappingFiles {
    public struct ReadError: Error, CustomStringConvertible {
        public let description: String
    }

    public static func read(_ paths: [String]) throws -> [(path: String, contents: String)] {
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
}
