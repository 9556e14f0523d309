"""The checks a schema gets before the emulator stores it: what makes Confluent's registry answer
422 / 42201 ("Error code 42201 indicates an invalid schema or schema type",
https://docs.confluent.io/cloud/current/ccloud/register/). The real registry parses schemas with
Avro's, protobuf's and a JSON Schema library; the emulator checks the rules pushbridge's tests
rely on (see docs/testing.md for what it does not check).
"""

from registry_errors import INVALID_SCHEMA, RegistryError

AVRO_PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
AVRO_NAMED = {"record", "error", "enum", "fixed"}


def invalid(message):
    return RegistryError(422, INVALID_SCHEMA, "Invalid schema: " + message)


def protobuf_wire_is_valid(data):
    """Whether `data` is a well-formed protobuf message (tags, varints, lengths within bounds):
    the check a base64 FileDescriptorProto gets before it is stored."""
    n = len(data)

    def read_varint(i, max_bytes):
        """The varint at `i` (at most `max_bytes` long) and the index after it, or None."""
        value = 0
        for k in range(max_bytes):
            if i + k >= n:
                return None
            value |= (data[i + k] & 0x7F) << (7 * k)
            if data[i + k] < 0x80:
                return value, i + k + 1
        return None

    i = 0
    while i < n:
        # A tag and a length fit in 32 bits (5 bytes); a value varint is at most 10 bytes.
        tag = read_varint(i, 5)
        if tag is None or tag[0] >> 3 == 0:
            return False
        key, i = tag
        wire = key & 7
        if wire == 0:
            value = read_varint(i, 10)
            if value is None:
                return False
            i = value[1]
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        elif wire == 2:
            length = read_varint(i, 5)
            if length is None:
                return False
            i = length[1] + length[0]
        else:
            return False
        if i > n:
            return False
    return True


def check_avro(node, namespace, names, depth=0):
    """Avro's rules the registry enforces by parsing the schema: every named type is defined
    before it is used (here, or in a referenced schema), once. Adds the names it defines."""
    if depth > 64:
        raise invalid("nested more than 64 levels")
    if isinstance(node, str):
        if node in AVRO_PRIMITIVES:
            return
        full = node if "." in node or not namespace else namespace + "." + node
        if full not in names and node not in names:
            raise invalid("undefined name: %s" % node)
        return
    if isinstance(node, list):
        for branch in node:
            check_avro(branch, namespace, names, depth + 1)
        return
    if not isinstance(node, dict) or "type" not in node:
        raise invalid("an Avro schema is a name, a union or an object with a type")
    kind = node["type"]
    if kind in AVRO_NAMED:
        name = node.get("name")
        if not isinstance(name, str) or not name:
            raise invalid("a %s needs a name" % kind)
        space = node.get("namespace", namespace) if "." not in name else name.rsplit(".", 1)[0]
        full = name if "." in name or not space else space + "." + name
        if full in names:
            raise invalid("%s is defined twice" % full)
        names.add(full)
        if kind in ("record", "error"):
            fields = node.get("fields")
            if not isinstance(fields, list):
                raise invalid("record %s has no fields list" % full)
            for field in fields:
                if not isinstance(field, dict) or "name" not in field or "type" not in field:
                    raise invalid("a field of %s needs a name and a type" % full)
                check_avro(field["type"], space, names, depth + 1)
        elif kind == "enum" and not isinstance(node.get("symbols"), list):
            raise invalid("enum %s has no symbols" % full)
        elif kind == "fixed" and not isinstance(node.get("size"), int):
            raise invalid("fixed %s has no size" % full)
    elif kind == "array":
        check_avro(node.get("items"), namespace, names, depth + 1)
    elif kind == "map":
        check_avro(node.get("values"), namespace, names, depth + 1)
    else:
        check_avro(kind, namespace, names, depth + 1)
