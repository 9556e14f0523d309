#!/usr/bin/env python3
"""Prints the real descriptors of the .proto files a Protobuf schema may import without a
reference, as one JSON object: {import path: base64 serialized FileDescriptorProto}.

They come from the modules protobuf, googleapis-common-protos and confluent-kafka ship
(PYTHONPATH=.tools/python): the google/protobuf/* and confluent/* files Confluent's Schema
Registry builds in (ProtobufSchema.java's known dependencies), and every google/type/* module
installed, so a google/type file added upstream shows up here. ProtoBuiltInFilesTests holds
pushbridge's own definitions of them against these.
"""

import base64
import importlib
import json
import os

GOOGLE_PROTOBUF = ["any", "api", "descriptor", "duration", "empty", "field_mask", "source_context", "struct", "timestamp", "type",
                   "wrappers"]
CONFLUENT = ["confluent_kafka.schema_registry.confluent.meta_pb2", "confluent_kafka.schema_registry.confluent.type.decimal_pb2"]


def google_type_modules():
    import google.type.date_pb2
    folder = os.path.dirname(google.type.date_pb2.__file__)
    return sorted("google.type." + name[:-3] for name in os.listdir(folder) if name.endswith("_pb2.py"))


def main():
    modules = ["google.protobuf.%s_pb2" % name for name in GOOGLE_PROTOBUF] + CONFLUENT + google_type_modules()
    out = {}
    for name in modules:
        descriptor = importlib.import_module(name).DESCRIPTOR
        out[descriptor.name] = base64.b64encode(descriptor.serialized_pb).decode("ascii")
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main()
