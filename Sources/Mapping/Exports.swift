// The mapping API speaks JSONValue, JSONPointer and WriterSchema; `import Mapping` brings them along.
@_exported import JSON
@_exported import RecordDecoding
