"""Prints what protoc makes of the .proto files beside this script, as ProtoTextParserTests
compares it: ProtoFile's shape (messages, fields, numbers, labels, kinds, type names, oneof
indexes, map entries, proto3_optional, packed, enums) in JSON.

Run from the repository root (writes expected.json next to this script):
    pip install --target /tmp/proto-text-py grpcio-tools
    PYTHONPATH=/tmp/proto-text-py python3 Tests/RecordDecodingTests/Fixtures/ProtoText/make_expected.py

The files are listed in dependency order: the Swift test parses each with the ones before it
as its imports.
"""

import json
import os
import sys
import tempfile

from google.protobuf import descriptor_pb2
from grpc_tools import protoc
import grpc_tools

FILES = ["acme/common.proto", "acme/orders.proto", "legacy.proto", "scoping.proto"]
HERE = os.path.dirname(os.path.abspath(__file__))
WELL_KNOWN = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")


def field(f):
    out = {"name": f.name, "number": f.number, "label": f.label, "kind": f.type}
    if f.type_name:
        out["typeName"] = f.type_name
    if f.HasField("oneof_index"):
        out["oneofIndex"] = f.oneof_index
    out["proto3Optional"] = f.proto3_optional
    if f.HasField("options") and f.options.HasField("packed"):
        out["packed"] = f.options.packed
    return out


def enum(e):
    return {"name": e.name, "values": [{"name": v.name, "number": v.number} for v in e.value]}


def message(m):
    return {
        "name": m.name,
        "fields": [field(f) for f in m.field],
        "nestedMessages": [message(n) for n in m.nested_type],
        "nestedEnums": [enum(e) for e in m.enum_type],
        "oneofs": [o.name for o in m.oneof_decl],
        "isMapEntry": m.options.map_entry,
    }


def main():
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "set.pb")
        args = ["protoc", "-I" + HERE, "-I" + WELL_KNOWN, "--descriptor_set_out=" + out] + FILES
        if protoc.main(args) != 0:
            sys.exit("protoc failed")
        files = descriptor_pb2.FileDescriptorSet()
        with open(out, "rb") as f:
            files.ParseFromString(f.read())
    by_name = {f.name: f for f in files.file}
    expected = []
    for name in FILES:
        f = by_name[name]
        expected.append(
            {
                "name": f.name,
                "package": f.package,
                "dependencies": list(f.dependency),
                "syntax": f.syntax or "proto2",
                "messages": [message(m) for m in f.message_type],
                "enums": [enum(e) for e in f.enum_type],
            }
        )
    with open(os.path.join(HERE, "expected.json"), "w") as f:
        json.dump({"files": expected}, f, indent=1)
        f.write("\n")


main()
