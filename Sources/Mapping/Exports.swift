// The mapping API speaks JSONValue and JSONPointer; `import Mapping` brings them along.
@_exported import JSON
