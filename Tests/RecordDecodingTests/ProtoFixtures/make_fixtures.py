"""Makes the Protobuf decoder's fixtures with the real clients: grpcio-tools' protoc compiles
acme/*.proto (in Tests/TestSupport/Resources/schemas/protobuf), the `protobuf` package builds and serializes the messages, and confluent-kafka's
ProtobufSerializer frames them (magic byte, schema ID, message indexes) against a mock Schema
Registry, which keeps the schema texts the serializer registers (base64 FileDescriptorProtos).

Prints Swift source (ProtoWireFixtures.swift) on stdout:

    PYTHONPATH=/tmp/proto-wire-py python3 make_fixtures.py > ../ProtoWireFixtures.swift
    swift format -i ../ProtoWireFixtures.swift

The protobuf library writes map entries (and so Struct members) in an order that can change
from run to run; the tests do not depend on it.

Needs: pip install --target /tmp/proto-wire-py grpcio-tools protobuf \
       "confluent-kafka[schemaregistry]" googleapis-common-protos
"""

import base64
import importlib
import math
import os
import sys
import tempfile

from google.protobuf import json_format
from grpc_tools import protoc
import grpc_tools

HERE = os.path.dirname(os.path.abspath(__file__))
# The one tree of Protobuf fixtures, shared with the producers of the end-to-end tests (their
# files are under acme/orders/v1/ and acme/stores/v1/; these are acme/*.proto).
PROTOS = os.path.join(HERE, "..", "..", "TestSupport", "Resources", "schemas", "protobuf")


def compile_protos(out):
    include = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    for name in ("acme/common.proto", "acme/orders.proto", "acme/legacy.proto"):
        code = protoc.main(["protoc", f"-I{PROTOS}", f"-I{include}", f"--python_out={out}", name])
        if code != 0:
            sys.exit(f"protoc failed on {name}")
    sys.path.insert(0, out)
    return tuple(importlib.import_module(f"acme.{name}_pb2") for name in ("orders", "common", "legacy"))


def full_order(orders, common):
    m = orders.OrderPlaced()
    m.order_id = "ord-42"
    m.status = orders.PLACED
    m.lines.add(sku="SKU-1", quantity=2, price_cents=-1999)
    m.lines.add(sku="SKU-2", quantity=1, price_cents=500)
    m.attributes["channel"] = "web"
    m.attributes["lang"] = "fr"
    m.email = "a@example.com"
    m.coupon = ""  # proto3 optional set to its default: present
    m.packed_numbers.extend([1, -2, 300])
    m.unpacked_numbers.extend([7, -8])
    m.min_int64 = -(2**63)
    m.max_uint64 = 2**64 - 1
    m.negative = -5
    m.zigzag32 = -3
    m.f32 = 4294967295
    m.f64 = 2**64 - 2
    m.sf32 = -123
    m.sf64 = -(2**63)
    m.ratio = 11.8
    m.amount = 1234.5678
    m.blob = b"\x00\x01\xfe\xff"
    m.gift = True
    m.placed_at.seconds = 1795512600  # 2026-11-24T09:30:00Z
    m.placed_at.nanos = 123000000
    m.ttl.seconds = 1
    m.ttl.nanos = 500000000
    m.note.value = "leave at door"
    m.points.value = 0  # a set wrapper holding the default: present
    m.extra.update({"vip": True, "tier": "gold", "score": 9.5, "tags": ["a", 1], "none": None})
    m.ship_to.street = "1 Rue de Rivoli"
    m.ship_to.country = "FR"
    m.ship_to.geo.lat = 48.8606
    m.ship_to.lines.extend(["Bat. A", "3e"])
    m.total.currency = common.EUR
    m.total.cents = 4498
    m.lines_by_no[1].sku = "SKU-1"
    m.lines_by_no[2].quantity = 9
    m.history.extend([orders.PLACED, orders.SHIPPED])
    m.max_int64 = 2**63 - 1
    m.max_uint32 = 2**32 - 1
    m.confirmed.value = False
    m.any_value.list_value.values.add().number_value = 1.5
    m.any_value.list_value.values.add().null_value = 0
    m.packed_zigzag.extend([-1, 1, -(2**31)])
    m.packed_doubles.extend([0.1, -2.5])
    m.not_a_number = math.nan
    m.infinity = -math.inf
    return m


def merged_order(orders, common, frame):
    """Two encodings one after the other, which protobuf reads as one merged message: the
    later oneof member wins, singular messages merge field by field, scalars: the last wins."""
    first = orders.OrderPlaced(order_id="first", phone="+33 6 12", history=[orders.PLACED])
    first.ship_to.street = "1 Rue A"
    first.ship_to.city = "Paris"
    first.placed_at.seconds = 1
    second = orders.OrderPlaced(order_id="second", email="b@example.com", history=[orders.SHIPPED])
    second.ship_to.street = "2 Rue B"
    second.placed_at.nanos = 5000
    body = first.SerializeToString() + second.SerializeToString()
    merged = orders.OrderPlaced.FromString(body)
    assert merged.WhichOneof("contact") == "email" and merged.order_id == "second"
    assert (merged.ship_to.street, merged.ship_to.city) == ("2 Rue B", "Paris")
    assert (merged.placed_at.seconds, merged.placed_at.nanos) == (1, 5000)
    assert list(merged.history) == [orders.PLACED, orders.SHIPPED]
    header = frame(orders.OrderPlaced())  # magic byte, schema ID, indexes [0]; empty body
    return header + body


def well_known(orders, common):
    m = orders.WellKnown()
    m.whole_second.seconds = 1795512600
    m.micros.seconds = 1795512600
    m.micros.nanos = 123456000
    m.nanos.seconds = 1795512600
    m.nanos.nanos = 1
    m.before_epoch.seconds = -1
    m.negative.seconds = -3
    m.negative.nanos = -250000000
    m.negative_fraction.nanos = -500
    m.whole.seconds = 90
    m.any.Pack(common.Money(currency=common.USD, cents=5))
    m.mask.paths.extend(["ship_to.city", "total"])
    m.empty.SetInParent()
    m.double_value.value = -0.5
    m.float_value.value = 0.1
    m.uint64_value.value = 2**64 - 1
    m.int32_value.value = -7
    m.uint32_value.value = 7
    m.bytes_value.value = b"hi"
    m.null_value.null_value = 0
    m.list.values.add().string_value = "x"
    m.list.values.add().struct_value.update({"k": [True]})
    m.nested.update({"a": {"b": {"c": None}}})
    return m


def legacy_order(legacy):
    m = legacy.LegacyOrder(order_id="L-1", after=7)
    m.extra.level = 3
    m.extra.inner.add(tag="x")
    m.extra.inner.add(tag="y")
    return m


def main():
    from confluent_kafka.schema_registry import SchemaRegistryClient
    from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
    from confluent_kafka.serialization import MessageField, SerializationContext

    with tempfile.TemporaryDirectory() as out:
        orders, common, legacy = compile_protos(out)
        registry = SchemaRegistryClient.new_client({"url": "mock://"})

        def frame(message, topic="orders"):
            serializer = ProtobufSerializer(type(message), registry, {"use.deprecated.format": False})
            return serializer(message, SerializationContext(topic, MessageField.VALUE))

        records = {
            "fullOrder": frame(full_order(orders, common)),
            "emptyOrder": frame(orders.OrderPlaced()),
            "phoneOrder": frame(orders.OrderPlaced(order_id="ord-7", phone="+33 6 12")),
            "shipped": frame(
                orders.OrderShipped(
                    order_id="ord-42",
                    parcels=[orders.OrderShipped.Parcel(tracking="TRK1")],
                    status=orders.SHIPPED,
                    flags={True: -1, False: 2},
                )
            ),
            "line": frame(orders.OrderPlaced.Line(sku="SKU-9", quantity=3, price_cents=-1)),
            "merged": merged_order(orders, common, frame),
            "wellKnown": frame(well_known(orders, common)),
            "legacy": frame(legacy_order(legacy), "legacy"),
        }
        oracle = json_format.MessageToJson(full_order(orders, common), preserving_proto_field_name=True, indent=None)
        wk_oracle = json_format.MessageToJson(well_known(orders, common), preserving_proto_field_name=True, indent=None)

        # What the serializers registered, read back as a consumer would.
        texts = {}
        for subject in registry.get_subjects():
            latest = registry.get_latest_version(subject)
            texts[subject] = (latest.schema.schema_str, [(r.name, r.subject) for r in latest.schema.references])

    print("// Generated by ProtoFixtures/make_fixtures.py (grpcio-tools protoc, protobuf, confluent-kafka's")
    print("// ProtobufSerializer with a mock registry); do not edit by hand.")
    print("")
    print("enum ProtoWireFixtures {")
    print("    /// The registered schema texts by subject, as the serializer registered them.")
    print("    static let schemas: [String: String] = [")
    for subject in sorted(texts):
        print(f'        "{subject}": "{texts[subject][0]}",')
    print("    ]")
    print("    /// Each subject's references: (import name, subject).")
    print("    static let references: [String: [(name: String, subject: String)]] = [")
    for subject in sorted(texts):
        refs = ", ".join(f'(name: "{n}", subject: "{s}")' for n, s in texts[subject][1])
        print(f"        \"{subject}\": [{refs}],")
    print("    ]")
    print("    /// Framed records (magic byte, schema ID, message indexes, message).")
    for name, data in records.items():
        print(f'    static let {name} = "{data.hex()}"')
    print("    /// fullOrder's message as the protobuf package's json_format writes it (proto field names).")
    print(f"    static let fullOrderJSON = #\"{oracle}\"#")
    print("    /// wellKnown's message as json_format writes it.")
    print(f"    static let wellKnownJSON = #\"{wk_oracle}\"#")
    print("}")


if __name__ == "__main__":
    main()
