#!/usr/bin/env python3
"""Produces records to Kafka with confluent-kafka's serializers (see HELP, printed by --help)."""

import avro_json

HELP = """Produces records to Kafka with confluent-kafka's own serializers and Schema Registry client
(AvroSerializer / ProtobufSerializer, confluent-kafka 2.16.1 from PyPI: scripts/setup.sh installs
it into .tools/python; run with PYTHONPATH=.tools/python), so that tests read exactly what
Confluent's clients write: magic byte 0, the schema's 4-byte ID, for Protobuf the message
indexes, then the Avro or Protobuf body.

Records file (--records): JSON lines, each {"key"?: text, "value": {...}, "headers"?: {name: text}}.
The key is written as plain UTF-8 (no key schema). Values:
  protobuf  protobuf's JSON mapping (json_format.ParseDict): field names as in the .proto or
            lowerCamelCase, enums by name, int64 as numbers or text, Timestamp as RFC 3339 text,
            bytes as base64.
  avro      JSON (avro_json.py):
""" + avro_json.__doc__.split("\n\n", 1)[1] + """
References: --reference FILE (Avro, repeatable) registers an .avsc under the subject named by
its full name, before the main schema, with a Confluent schema reference {name: full name,
subject: full name, version} for each earlier reference whose full name it mentions; the main
schema references those it mentions. Protobuf imports are registered by the serializer itself,
each file under its own path as subject (reference.subject.name.strategy's default);
google/protobuf/*, google/type/* and confluent/* are not (skip.known.types: _is_builtin).
protoc finds google/protobuf/* in grpcio-tools and google/type/* in googleapis-common-protos.

Prints one JSON line: {"produced": N, "schema_ids": [IDs in the records' frames], "subject": ...,
"references": [{name, subject, version, id}]}. Exits 1 on any registry, serialization or
delivery error. With --print-values nothing goes to Kafka: the line has "values", each record's
serialized value in base64, and --bootstrap-servers is not needed.
"""

import argparse
import base64
import json
import os
import sys
import tempfile

from confluent_kafka import Producer
from confluent_kafka.schema_registry import Schema, SchemaReference, SchemaRegistryClient
from confluent_kafka.serialization import MessageField, SerializationContext


def registry_client(args):
    conf = {"url": args.registry}
    if args.registry_user is not None:
        conf["basic.auth.user.info"] = "%s:%s" % (args.registry_user, args.registry_password or "")
    if args.registry_ca:
        conf["ssl.ca.location"] = args.registry_ca
    conf["max.retries"] = args.registry_retries
    conf["retries.wait.ms"] = 200
    conf["retries.max.wait.ms"] = 2000
    return SchemaRegistryClient(conf)


def serializer_conf(args):
    if args.use_latest_version:
        return {"auto.register.schemas": False, "use.latest.version": True}
    return {"auto.register.schemas": not args.no_auto_register}


def full_name(text):
    schema = json.loads(text)
    name = schema["name"]
    return name if "." in name or not schema.get("namespace") else schema["namespace"] + "." + name


def avro_serializer(args, client):
    from confluent_kafka.schema_registry.avro import AvroSerializer

    registered = []  # (full name, SchemaReference, id, text)
    for path in args.reference:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        name = full_name(text)
        uses = [r for (n, r, _, _) in registered if '"%s"' % n in text]
        schema = Schema(text, "AVRO", references=uses)
        schema_id = client.register_schema(name, schema)
        version = client.lookup_schema(name, schema).version
        registered.append((name, SchemaReference(name, name, version), schema_id, text))
    with open(args.schema, encoding="utf-8") as f:
        text = f.read()
    uses = [r for (n, r, _, _) in registered if '"%s"' % n in text]
    names = {}
    for _, _, _, reference_text in registered:
        avro_json.collect_names(json.loads(reference_text), None, names)
    parsed = json.loads(text)
    avro_json.collect_names(parsed, None, names)
    serializer = AvroSerializer(client, Schema(text, "AVRO", references=uses), conf=serializer_conf(args))

    def to_value(value):
        return avro_json.convert(parsed, value, None, names)

    references = [{"name": n, "subject": r.subject, "version": r.version, "id": i} for (n, r, i, _) in registered]
    return serializer, to_value, references


def googleapis_root():
    """The import root of googleapis-common-protos' .proto files (google/type/*.proto), which it
    installs beside its modules."""
    from google.type import date_pb2

    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(date_pb2.__file__))))


def protobuf_serializer(args, client):
    from importlib.resources import files

    from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory
    from grpc_tools import protoc

    from confluent_kafka.schema_registry.protobuf import ProtobufSerializer

    if not args.message:
        sys.exit("--message NAME is needed for protobuf (the full name, e.g. acme.orders.v1.OrderShipped)")
    # The file's name in its descriptor (and so its subject as a reference) is its path under
    # the import root that holds it: a --proto-path, else its own folder.
    roots = [os.path.abspath(p) for p in args.proto_path]
    schema = os.path.abspath(args.schema)
    if not any(schema.startswith(root + os.sep) for root in roots):
        roots.append(os.path.dirname(schema))
    include = roots + [str(files("grpc_tools") / "_proto"), googleapis_root()]
    with tempfile.TemporaryDirectory() as directory:
        out = os.path.join(directory, "set.pb")
        arguments = ["protoc"] + ["-I" + p for p in include]
        arguments += ["--include_imports", "--descriptor_set_out=" + out, schema]
        if protoc.main(arguments) != 0:
            sys.exit("protoc could not compile %s" % args.schema)
        with open(out, "rb") as f:
            files_set = descriptor_pb2.FileDescriptorSet.FromString(f.read())
    pool = descriptor_pool.DescriptorPool()
    for proto in files_set.file:  # dependencies first (--include_imports orders them)
        pool.AddSerializedFile(proto.SerializeToString())
    message_class = message_factory.GetMessageClass(pool.FindMessageTypeByName(args.message))
    conf = dict(serializer_conf(args), **{"use.deprecated.format": False})
    serializer = ProtobufSerializer(message_class, client, conf=conf)

    def to_value(value):
        return json_format.ParseDict(value, message_class())

    return serializer, to_value, []


def main():
    parser = argparse.ArgumentParser(description=HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--format", choices=["avro", "protobuf"], required=True)
    parser.add_argument("--schema", required=True, help=".avsc (JSON) or .proto file")
    parser.add_argument("--message", help="protobuf: the message's full name")
    parser.add_argument("--records", required=True, help="JSON lines, see above")
    parser.add_argument("--reference", action="append", default=[], help="avro: an .avsc the schema refers to")
    parser.add_argument("--proto-path", action="append", default=[], help="protobuf: another import root")
    parser.add_argument("--topic", required=True)
    parser.add_argument("--bootstrap-servers", help="needed unless --print-values")
    parser.add_argument("--print-values", action="store_true", help="serialize only: print the values in base64, produce nothing")
    parser.add_argument("--producer-property", action="append", default=[], metavar="KEY=VALUE",
                        help="a librdkafka property (security.protocol, ssl.ca.location, ...)")
    parser.add_argument("--registry", required=True, help="the Schema Registry URL")
    parser.add_argument("--registry-user")
    parser.add_argument("--registry-password")
    parser.add_argument("--registry-ca", help="CA file that signed the registry's TLS certificate")
    parser.add_argument("--registry-retries", type=int, default=3, help="the client's max.retries (default 3)")
    parser.add_argument("--no-auto-register", action="store_true",
                        help="auto.register.schemas=false: look the schema up (POST /subjects/{subject})")
    parser.add_argument("--use-latest-version", action="store_true",
                        help="use.latest.version=true: write with the subject's latest version")
    args = parser.parse_args()

    if not args.print_values and not args.bootstrap_servers:
        parser.error("--bootstrap-servers is needed unless --print-values")
    client = registry_client(args)
    make = avro_serializer if args.format == "avro" else protobuf_serializer
    producer = None
    if not args.print_values:
        producer_conf = {"bootstrap.servers": args.bootstrap_servers, "enable.idempotence": False, "acks": "all"}
        for item in args.producer_property:
            key, _, value = item.partition("=")
            producer_conf[key] = value
        producer = Producer(producer_conf)
    failures = []
    values = []

    def delivered(error, message):
        if error is not None:
            failures.append(str(error))

    try:
        serializer, to_value, references = make(args, client)
        context = SerializationContext(args.topic, MessageField.VALUE)
        ids = []
        count = 0
        with open(args.records, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                record = json.loads(line)
                value = serializer(to_value(record["value"]), context)
                schema_id = int.from_bytes(value[1:5], "big")
                if schema_id not in ids:
                    ids.append(schema_id)
                count += 1
                if producer is None:
                    values.append(base64.b64encode(value).decode("ascii"))
                    continue
                headers = [(k, str(v).encode()) for k, v in (record.get("headers") or {}).items()]
                key = record.get("key")
                producer.produce(args.topic, value=value, key=key.encode() if key is not None else None,
                                 headers=headers, on_delivery=delivered)
                producer.poll(0)
    except Exception as e:  # the client's SchemaRegistryError, a serialization error, bad input
        print("produce_records: %s: %s" % (type(e).__name__, e), file=sys.stderr)
        return 1
    remaining = producer.flush(30) if producer is not None else 0
    if remaining or failures:
        print("produce_records: %d undelivered, errors: %s" % (remaining, failures), file=sys.stderr)
        return 1
    subject = "%s-value" % args.topic  # topic_subject_name_strategy, the serializers' default
    result = {"produced": count, "schema_ids": ids, "subject": subject, "references": references}
    if producer is None:
        result["values"] = values
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
