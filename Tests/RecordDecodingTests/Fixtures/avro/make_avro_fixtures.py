"""Makes the Avro fixture bytes of the Swift tests in Tests/RecordDecodingTests/Avro*.swift.

Each fixture is the Avro binary of one value, written by fastavro's schemaless_writer (the
encoding Confluent's AvroSerializer puts after its 5-byte header). Run:

    pip install --target /tmp/avro-py fastavro
    PYTHONPATH=/tmp/avro-py python3 make_avro_fixtures.py

and paste a fixture's hex into the test that names it. Every fixture is read back with
fastavro's schemaless_reader, and what fastavro reads is printed beside it, so the expected
values in the Swift tests can be checked against a second implementation.
"""

import datetime
import io
import uuid
from decimal import Decimal

from fastavro import parse_schema, schemaless_reader, schemaless_writer

PRIMITIVES = {
    "type": "record",
    "name": "Primitives",
    "namespace": "com.acme",
    "fields": [
        {"name": "n", "type": "null"},
        {"name": "b", "type": "boolean"},
        {"name": "i", "type": "int"},
        {"name": "l", "type": "long"},
        {"name": "f", "type": "float"},
        {"name": "d", "type": "double"},
        {"name": "by", "type": "bytes"},
        {"name": "s", "type": "string"},
    ],
}

COMPLEX = {
    "type": "record",
    "name": "OrderShipped",
    "namespace": "com.acme.orders",
    "fields": [
        {"name": "id", "type": "string"},
        {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "SHIPPED", "LOST"]}},
        {"name": "hash", "type": {"type": "fixed", "name": "Hash", "size": 4}},
        {
            "name": "items",
            "type": {
                "type": "array",
                "items": {
                    "type": "record",
                    "name": "Item",
                    "namespace": "com.acme.catalog",
                    "fields": [
                        {"name": "sku", "type": "string"},
                        {"name": "qty", "type": "int"},
                        {"name": "tags", "type": {"type": "map", "values": "string"}},
                    ],
                },
            },
        },
        {"name": "counts", "type": {"type": "map", "values": "long"}},
        {"name": "note", "type": ["null", "string"]},
        {"name": "previous", "type": ["null", "com.acme.catalog.Item"]},
        {"name": "choice", "type": ["null", "long", "string", "Status", {"type": "array", "items": "int"}]},
        {"name": "after", "type": "int"},
    ],
}

LINKED_LIST = {
    "type": "record",
    "name": "Node",
    "namespace": "list",
    "fields": [
        {"name": "value", "type": "long"},
        {"name": "next", "type": ["null", "Node"]},
    ],
}

LOGICAL = {
    "type": "record",
    "name": "Logical",
    "fields": [
        {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 40, "scale": 2}},
        {"name": "whole", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10}},
        {
            "name": "fixedPrice",
            "type": {"type": "fixed", "name": "Money", "size": 8, "logicalType": "decimal", "precision": 18, "scale": 3},
        },
        {"name": "tsMillis", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "tsMicros", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "localMillis", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
        {"name": "localMicros", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}},
        {"name": "tMillis", "type": {"type": "int", "logicalType": "time-millis"}},
        {"name": "tMicros", "type": {"type": "long", "logicalType": "time-micros"}},
        {"name": "id", "type": {"type": "string", "logicalType": "uuid"}},
    ],
}

# A value of a record with a map and an array written in byte-size blocks (see blocked()).
BLOCKED = {
    "type": "record",
    "name": "Blocked",
    "fields": [
        {"name": "first", "type": "string"},
        {
            "name": "lists",
            "type": {"type": "array", "items": {"type": "array", "items": "string"}},
        },
        {"name": "scores", "type": {"type": "map", "values": {"type": "map", "values": "long"}}},
        {"name": "last", "type": "long"},
    ],
}

UTC = datetime.timezone.utc


def encode(schema, value, named=None):
    parsed = parse_schema(schema, named_schemas=named if named is not None else {})
    out = io.BytesIO()
    schemaless_writer(out, parsed, value)
    return out.getvalue()


def show(name, schema, value, named=None, data=None):
    data = encode(schema, value, named) if data is None else data
    parsed = parse_schema(schema, named_schemas=named if named is not None else {})
    print(f"{name}: {data.hex()}")
    try:
        read = schemaless_reader(io.BytesIO(data), parsed, None)
        print(f"    fastavro reads: {read!r}")
    except (ValueError, OverflowError) as error:  # Python's datetime stops at year 1
        read = schemaless_reader(io.BytesIO(data), parse_schema(schema["type"]), None)
        print(f"    fastavro reads: {read!r} (not as its logical type: {error})")


def long_bytes(n):
    """An Avro long (zigzag varint), as fastavro writes it."""
    out = io.BytesIO()
    schemaless_writer(out, parse_schema("long"), n)
    return out.getvalue()


def blocked(item_schema, blocks, is_map):
    """An array or map in blocks with negative counts and byte sizes, as the Avro specification
    allows and Java's blocking encoder writes (fastavro writes plain counts but reads these).
    Each item is fastavro's own encoding; only the block framing is assembled here."""
    out = b""
    for block in blocks:
        body = b""
        for item in block:
            if is_map:
                key, value = item
                body += encode("string", key) + encode(item_schema, value)
            else:
                body += encode(item_schema, item)
        out += long_bytes(-len(block)) + long_bytes(len(body)) + body
    return out + b"\x00"


def main():
    show(
        "primitives",
        PRIMITIVES,
        {"n": None, "b": True, "i": -123456, "l": 9007199254740993, "f": 11.8, "d": -2.5e-300,
         "by": b"\x00\x01hi\xff", "s": "h\u00e9llo \u2713 \U0001F680"},
    )
    show(
        "primitivesExtremes",
        PRIMITIVES,
        {"n": None, "b": False, "i": -2147483648, "l": -9223372036854775808, "f": float("nan"),
         "d": float("inf"), "by": b"", "s": ""},
    )
    show(
        "primitivesMax",
        PRIMITIVES,
        {"n": None, "b": True, "i": 2147483647, "l": 9223372036854775807, "f": float("-inf"),
         "d": float("nan"), "by": b"\xfb\xff", "s": "x"},
    )
    show(
        "complex",
        COMPLEX,
        {
            "id": "o-1",
            "status": "SHIPPED",
            "hash": b"\xde\xad\xbe\xef",
            "items": [
                {"sku": "A-1", "qty": 2, "tags": {"color": "red"}},
                {"sku": "B-2", "qty": -1, "tags": {}},
            ],
            "counts": {"a": 1, "b": -2},
            "note": None,
            "previous": {"sku": "Z", "qty": 7, "tags": {"k": "v"}},
            "choice": ("com.acme.orders.Status", "LOST"),
            "after": 42,
        },
    )
    show(
        "complexOtherBranches",
        COMPLEX,
        {
            "id": "o-2",
            "status": "NEW",
            "hash": b"\x00\x00\x00\x00",
            "items": [],
            "counts": {},
            "note": "fragile",
            "previous": None,
            "choice": [1, 2, 3],
            "after": -42,
        },
    )
    show(
        "complexLongChoice",
        COMPLEX,
        {"id": "", "status": "LOST", "hash": b"\x01\x02\x03\x04", "items": [], "counts": {}, "note": None,
         "previous": None, "choice": -5, "after": 0},
    )
    show(
        "linkedList",
        LINKED_LIST,
        {"value": 1, "next": {"value": 2, "next": {"value": 3, "next": None}}},
    )
    show(
        "logical",
        LOGICAL,
        {
            "price": Decimal("11.80"),
            "whole": Decimal("1180"),
            "fixedPrice": Decimal("-0.050"),
            "tsMillis": datetime.datetime(2026, 11, 24, 9, 30, 0, 123000, tzinfo=UTC),
            "tsMicros": datetime.datetime(2026, 11, 24, 9, 30, 0, 123456, tzinfo=UTC),
            "localMillis": datetime.datetime(2026, 11, 24, 9, 30, 0, 123000),
            "localMicros": datetime.datetime(2026, 11, 24, 9, 30, 0, 123456),
            "day": datetime.date(2026, 11, 24),
            "tMillis": datetime.time(9, 30, 0, 123000),
            "tMicros": datetime.time(9, 30, 0, 123456),
            "id": uuid.UUID("6f1c2a3e-8b4d-4e2f-9a1b-0c2d3e4f5a6b"),
        },
    )
    show(
        "logicalNegative",
        LOGICAL,
        {
            "price": Decimal("-0.05"),
            "whole": Decimal("-9999999999"),
            "fixedPrice": Decimal("123456789012345.678"),
            # 1969-07-20T20:17:40.500Z and one microsecond before the epoch.
            "tsMillis": -14182939500,
            "tsMicros": -1,
            "localMillis": -1,
            "localMicros": -62135596800000000,
            "day": -1,
            "tMillis": 0,
            "tMicros": 86399999999,
            "id": "00000000-0000-0000-0000-000000000000",
        },
    )
    show(
        "logicalBig",
        LOGICAL,
        {
            "price": Decimal("-1234567890123456789012345678901234567.89"),
            "whole": Decimal("0"),
            "fixedPrice": Decimal("-999999999999999.999"),
            "tsMillis": 0,
            "tsMicros": 0,
            "localMillis": 253402300799999,
            "localMicros": 0,
            "day": 0,
            "tMillis": 86399999,
            "tMicros": 0,
            "id": "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF",
        },
    )
    show(
        "blocked",
        BLOCKED,
        {"first": "a", "lists": [["x", "yy"], [], ["zzz"]], "scores": {"p": {"q": 1}, "r": {}}, "last": -7},
        data=encode("string", "a")
        + blocked({"type": "array", "items": "string"}, [[["x", "yy"], []], [["zzz"]]], False)
        + blocked({"type": "map", "values": "long"}, [[("p", {"q": 1})], [("r", {})]], True)
        + encode("long", -7),
    )
    # Confluent schema references: Money is its own subject; the order uses it by full name.
    money = {"type": "record", "name": "Money", "namespace": "com.acme.common",
             "fields": [{"name": "units", "type": "long"}, {"name": "currency", "type": "string"}]}
    order = {"type": "record", "name": "Order", "namespace": "com.acme",
             "fields": [{"name": "total", "type": "com.acme.common.Money"},
                        {"name": "lines", "type": {"type": "array", "items": "com.acme.common.Money"}}]}
    named = {}
    parse_schema(money, named_schemas=named)
    show("references", order,
         {"total": {"units": 1250, "currency": "EUR"}, "lines": [{"units": 1000, "currency": "EUR"}]}, named)

    # One value of a top-level type per line, for the table-driven tests.
    decimal = {"type": "bytes", "logicalType": "decimal", "precision": 40, "scale": 2}
    for text in ["11.80", "-0.05", "0.00", "-0.01", "1.27", "1.28", "-1.28", "-1.29", "327.67", "327.68", "-327.68",
                 "-327.69", "0.10", "99999999999999999999999999999999999999.99"]:
        show(f"decimal2 {text}", decimal, Decimal(text))
    for text in ["1180", "-1", "0", "255", "-256", "18446744073709551616", "-128", "-32768", "-8388608"]:
        show(f"decimal0 {text}", {**decimal, "scale": 0}, Decimal(text))
    for millis in [0, -1, -1000, -86400000, -14182939500, 1795512600123, 253402300799999, -62135596800000]:
        show(f"timestamp-millis {millis}", {"type": "long", "logicalType": "timestamp-millis"}, millis)
    for micros in [0, -1, 1795512600123456, -62135596800000001]:
        show(f"timestamp-micros {micros}", {"type": "long", "logicalType": "timestamp-micros"}, micros)
    for days in [0, -1, 20781, -719528, 2932896]:
        show(f"date {days}", {"type": "int", "logicalType": "date"}, days)
    # Plain ints and longs that a time-millis or time-micros cannot hold (not within one day).
    for millis in [86400000, -1]:
        show(f"int {millis}", "int", millis)
    for micros in [86400000000, -1]:
        show(f"long {micros}", "long", micros)
    fixed16 = {"type": "fixed", "name": "Id", "size": 16}
    show("uuid-fixed 6f1c2a3e-8b4d-4e2f-9a1b-0c2d3e4f5a6b", fixed16,
         uuid.UUID("6f1c2a3e-8b4d-4e2f-9a1b-0c2d3e4f5a6b").bytes)

    # Linked lists as deep as the decoder allows (64 records) and one deeper.
    for length in [64, 65]:
        node = None
        for value in range(length, 0, -1):
            node = {"value": value, "next": node}
        show(f"linkedList{length}", LINKED_LIST, node)


if __name__ == "__main__":
    main()
