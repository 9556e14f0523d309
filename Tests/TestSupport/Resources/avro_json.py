"""JSON values to what fastavro's writer takes, guided by the Avro schema (produce_records.py).

JSON has no decimals, timestamps, dates or bytes, so the records files write them as text:

    decimal (bytes or fixed)     "149.90" or a number                -> decimal.Decimal
    timestamp-millis / -micros   ISO 8601 "2026-03-14T09:26:53.589Z" -> aware datetime
                                 (no offset: UTC), or the integer itself
    local-timestamp-*            ISO 8601 without offset             -> naive datetime
    date                         "2026-03-16"                        -> datetime.date
    time-millis / -micros        "09:26:53.589"                      -> datetime.time
    uuid                         "5b6f7a1e-…"                        -> uuid.UUID
    bytes, fixed                 base64 text                         -> bytes
    union                        a plain value takes the first branch it converts to, in the
                                 union's order; {"long": 42} (Avro's JSON encoding: the branch's
                                 type or full name as the only key) chooses the branch
    record fields left out       the field's default (fastavro fills it in)
"""

import base64
import datetime
import decimal
import uuid

PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
NAMED = {"record", "error", "enum", "fixed"}


def collect_names(node, namespace, names):
    """Full name -> definition of every named type in `node` (for references by name)."""
    if isinstance(node, list):
        for branch in node:
            collect_names(branch, namespace, names)
    elif isinstance(node, dict):
        kind = node.get("type")
        if kind in NAMED:
            names[full_name(node, namespace)] = dict(node, _namespace=space_of(node, namespace))
            for field in node.get("fields", []):
                collect_names(field["type"], space_of(node, namespace), names)
        elif kind == "array":
            collect_names(node["items"], namespace, names)
        elif kind == "map":
            collect_names(node["values"], namespace, names)
        elif isinstance(kind, (dict, list)):
            collect_names(kind, namespace, names)


def resolve(node, namespace, names):
    if isinstance(node, str) and node not in PRIMITIVES:
        full = node if "." in node or not namespace else namespace + "." + node
        return names.get(full) or names[node]
    return node


def space_of(node, namespace):
    """The namespace a named type defines its name in (and its fields resolve names in)."""
    name = node["name"]
    return name.rsplit(".", 1)[0] if "." in name else node.get("namespace", namespace)


def full_name(node, namespace):
    space = space_of(node, namespace)
    return node["name"] if "." in node["name"] or not space else space + "." + node["name"]


def branch_names(node, namespace):
    """The names a union branch answers to: a primitive's type, a named type's short and full name."""
    if isinstance(node, str):
        return {node}
    if node.get("type") in NAMED:
        return {node["name"], full_name(node, namespace)}
    return {node.get("type")} if isinstance(node.get("type"), str) else set()


def parse_datetime(text, aware):
    value = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    if aware and value.tzinfo is None:
        value = value.replace(tzinfo=datetime.timezone.utc)
    return value


def convert(node, value, namespace, names, depth=0):
    """`value` (from JSON) for the schema `node`; raises ValueError when it does not fit."""
    if depth > 64:
        raise ValueError("nested more than 64 levels")
    node = resolve(node, namespace, names)
    if isinstance(node, list):
        return convert_union(node, value, namespace, names, depth)
    kind = node if isinstance(node, str) else node.get("type")
    logical = node.get("logicalType") if isinstance(node, dict) else None
    if isinstance(node, dict) and kind in NAMED:
        namespace = node.get("_namespace") or space_of(node, namespace)
    if isinstance(kind, (dict, list)):
        return convert(kind, value, namespace, names, depth + 1)
    if kind == "null":
        if value is not None:
            raise ValueError("expected null")
        return None
    if logical == "decimal" and kind in ("bytes", "fixed"):
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise ValueError("a decimal is text or a number")
        return decimal.Decimal(str(value))
    if logical in ("timestamp-millis", "timestamp-micros", "local-timestamp-millis", "local-timestamp-micros"):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        return parse_datetime(value, aware=not logical.startswith("local"))
    if logical == "date" and isinstance(value, str):
        return datetime.date.fromisoformat(value)
    if logical in ("time-millis", "time-micros") and isinstance(value, str):
        return datetime.time.fromisoformat(value)
    if logical == "uuid":
        return uuid.UUID(value)
    if kind in ("bytes", "fixed"):
        if not isinstance(value, str):
            raise ValueError("bytes are base64 text")
        return base64.b64decode(value, validate=True)
    if kind == "string":
        if not isinstance(value, str):
            raise ValueError("expected a string")
        return value
    if kind in ("int", "long"):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError("expected an integer")
        return value
    if kind in ("float", "double"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError("expected a number")
        return float(value)
    if kind == "boolean":
        if not isinstance(value, bool):
            raise ValueError("expected a boolean")
        return value
    if kind == "enum":
        if value not in node["symbols"]:
            raise ValueError("%r is not a symbol of %s" % (value, node["name"]))
        return value
    if kind == "array":
        if not isinstance(value, list):
            raise ValueError("expected an array")
        return [convert(node["items"], v, namespace, names, depth + 1) for v in value]
    if kind == "map":
        if not isinstance(value, dict):
            raise ValueError("expected an object")
        return {k: convert(node["values"], v, namespace, names, depth + 1) for k, v in value.items()}
    if kind in ("record", "error"):
        if not isinstance(value, dict):
            raise ValueError("expected an object for record %s" % node["name"])
        fields = {f["name"]: f for f in node["fields"]}
        unknown = set(value) - set(fields)
        if unknown:
            raise ValueError("%s has no field %s" % (node["name"], ", ".join(sorted(unknown))))
        return {k: convert(fields[k]["type"], v, namespace, names, depth + 1) for k, v in value.items()}
    raise ValueError("unsupported schema %r" % (node,))


def convert_union(branches, value, namespace, names, depth):
    if isinstance(value, dict) and len(value) == 1:
        (chosen, inner), = value.items()
        for branch in branches:
            resolved = resolve(branch, namespace, names)
            if chosen in branch_names(resolved, namespace):
                # fastavro's tuple notation picks a branch by its type, or a named type's full name.
                named = isinstance(resolved, dict) and resolved.get("type") in NAMED
                label = full_name(resolved, resolved.get("_namespace") or namespace) if named else chosen
                return (label, convert(branch, inner, namespace, names, depth + 1))
    errors = []
    for branch in branches:
        try:
            return convert(branch, value, namespace, names, depth + 1)
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            errors.append(str(e))
    raise ValueError("no branch of the union takes %r (%s)" % (value, "; ".join(errors)))
