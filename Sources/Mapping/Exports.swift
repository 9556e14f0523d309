// The mapping API speaks JSONValue, JSONPointer, WriterSchema and MessageTarget; `import Mapping`
// brings them along.
@_exported import FCMTargets
@_exported import JSON
@_exported import RecordDecoding
