#!/usr/bin/env python3
"""FCM HTTP v1's `Message` schema, from Google's own discovery document, as a Swift table.

The discovery document (`fcm.v1.json`) ships in the google-api-python-client wheel on PyPI. This
script downloads one pinned wheel (`pip download --no-deps`), refuses it unless its sha256 and the
sha256 of the `fcm.v1.json` inside it are the pinned ones, and writes the schema of `Message` (every
message type it reaches, each field's type, format, enum values, repetition, and whether it is
deprecated, output only or required) to Sources/FCMEmulator/DiscoverySchema.generated.swift: the
table the emulator validates requests with (docs/emulator.md); and the same table to
Sources/Mapping/Load/FCMSchema.generated.swift, which the mapping loader checks the `fcm:` overlay
against (docs/mapping.md), and the overlay's `$defs` (the `"fcm…"` lines at the top of `$defs`) in
schemas/mapping.schema.json. Standard library only.

  scripts/fcm-schema.py            write the generated file
  scripts/fcm-schema.py --check    exit 1 (with a diff) if a committed file is not what the
                                   pinned document generates now (FCMSchemaTests runs this)
  scripts/fcm-schema.py --fetch    only download and verify the wheel (scripts/setup.sh)
  --cache DIR                      where the wheel is kept (default .tools/fcm); downloaded there
                                   when missing

The wheel and the document are Google's files and are never committed; the generated Swift is
ours. Moving to a new revision: change the three pins below, run the script, review the diff.
"""
import argparse
import difflib
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import zipfile

PACKAGE = "google-api-python-client"
VERSION = "2.202.0"
WHEEL = f"google_api_python_client-{VERSION}-py3-none-any.whl"
WHEEL_SHA256 = "aaa90064c9bb642ff1d065b22ca8958a2cb6e345909cefe70d0e5452fc50e08b"
DOCUMENT = "googleapiclient/discovery_cache/documents/fcm.v1.json"
DOCUMENT_SHA256 = "5af8eff795b9c5c29a250494e4996980ccc982938c863109d614389a591aa3f9"

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The same table twice, as each module's own type: the emulator shares no code with the mapping
# core (docs/emulator.md), whose loader checks the `fcm:` overlay against it (docs/mapping.md).
OUTPUTS = {
    "DiscoverySchema": (os.path.join(ROOT, "Sources", "FCMEmulator", "DiscoverySchema.generated.swift"), "FCMSchemaTests"),
    "FCMSchema": (os.path.join(ROOT, "Sources", "Mapping", "Load", "FCMSchema.generated.swift"), "FCMSchemaTests"),
}
LINE = 150  # .swift-format's lineLength


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def fetch(cache):
    """The pinned wheel's bytes, downloaded into `cache` when it is not there yet."""
    path = os.path.join(cache, WHEEL)
    if not os.path.exists(path):
        os.makedirs(cache, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", "-d", cache, f"{PACKAGE}=={VERSION}"],
            check=True)
    with open(path, "rb") as f:
        wheel = f.read()
    if sha256(wheel) != WHEEL_SHA256:
        sys.exit(f"fcm-schema: {path} has sha256 {sha256(wheel)}, not the pinned {WHEEL_SHA256}")
    return wheel


def document(wheel):
    data = zipfile.ZipFile(io.BytesIO(wheel)).read(DOCUMENT)
    if sha256(data) != DOCUMENT_SHA256:
        sys.exit(f"fcm-schema: {DOCUMENT} has sha256 {sha256(data)}, not the pinned {DOCUMENT_SHA256}")
    return json.loads(data)


def snake(name):
    """The proto field name of a discovery (lowerCamelCase) name: `androidV2` -> `android_v2`."""
    return re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), name)


def kind(prop):
    """The Swift `DiscoverySchema.Kind` of a property (an array's items for an array)."""
    if "$ref" in prop:
        return f'.message("{prop["$ref"]}")'
    t, fmt = prop.get("type"), prop.get("format")
    if t == "string":
        if "enum" in prop:
            return ".enumeration([" + ", ".join(f'"{e}"' for e in prop["enum"]) + "])"
        return {None: ".string", "google-duration": ".duration", "google-datetime": ".timestamp"}[fmt]
    if t == "boolean":
        return ".bool"
    if t == "integer" and fmt == "int32":
        return ".int32"
    if t == "number" and fmt == "float":
        return ".float"
    if t == "object":
        inner = prop.get("additionalProperties", {}).get("type")
        return {"string": ".stringMap", "any": ".freeObject"}[inner]
    raise SystemExit(f"fcm-schema: no Kind for {json.dumps(prop)[:200]}")


def field(prop):
    if prop.get("type") == "array":
        arguments = [kind(prop["items"]), "repeated: true"]
    else:
        arguments = [kind(prop)]
    description = prop.get("description", "")
    if prop.get("deprecated"):
        arguments.append("deprecated: true")
    if prop.get("readOnly") or description.lower().startswith("output only"):
        arguments.append("outputOnly: true")
    if description.startswith("Required."):
        arguments.append("required: true")
    return arguments


def reachable(schemas, name, seen):
    if name in seen:
        return
    seen.add(name)
    for prop in schemas[name].get("properties", {}).values():
        ref = prop.get("$ref") or prop.get("items", {}).get("$ref")
        if ref:
            reachable(schemas, ref, seen)


def entry(name, arguments, indent):
    """One `"name": Field(...),` line, broken as swift-format breaks it when too long."""
    pad = " " * indent
    line = f'{pad}"{name}": Field({", ".join(arguments)}),'
    if len(line) <= LINE:
        return [line]
    # Only enumerations get this long: their values on a line of their own.
    head, values = arguments[0].split("([", 1)
    values = values[: -len("])")]
    rest = "".join(", " + a for a in arguments[1:])
    return [f'{pad}"{name}": Field(', f"{pad}    {head}([", f"{pad}        {values},", f"{pad}    ]){rest}),"]


def generate(doc, type_name, test):
    schemas = doc["schemas"]
    names = set()
    reachable(schemas, "Message", names)
    lines = [
        f"// Generated by scripts/fcm-schema.py from fcm.v1.json revision {doc['revision']}, as published in",
        f"// {PACKAGE} {VERSION} on PyPI (wheel sha256 {WHEEL_SHA256[:16]}…,",
        f"// {DOCUMENT} sha256 {DOCUMENT_SHA256[:16]}…). Do not edit:",
        f"// run the script ({test} fails when this file is not what it generates).",
        "",
        f"extension {type_name} {{",
        "    /// The discovery document's `revision`.",
        f'    static let revision = "{doc["revision"]}"',
        "",
        "    /// Every message type `Message` reaches: its fields by proto (snake_case) name.",
        "    static let messages: [String: [String: Field]] = [",
    ]
    for name in sorted(names):
        props = schemas[name].get("properties", {})
        if not props:
            lines.append(f'        "{name}": [:],')
            continue
        lines.append(f'        "{name}": [')
        for prop_name in sorted(props, key=snake):
            lines.extend(entry(snake(prop_name), field(props[prop_name]), 12))
        if len(props) == 1:
            lines[-1] = lines[-1].rstrip(",")  # swift-format: no trailing comma after a lone element
        lines.append("        ],")
    lines += ["    ]", "}", ""]
    return "\n".join(lines)


SCHEMA = os.path.join(ROOT, "schemas", "mapping.schema.json")
# What the `fcm:` overlay refuses (MappingLoader+Overlay.swift): left out of its schema.
REFUSED = {"Message": {"token", "fid", "topic", "condition", "name", "data", "android_v2"}}


def camel(name):
    """The lowerCamelCase JSON name of a proto name, which FCM's parser reads too."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def value_schema(prop):
    """A JSON Schema for one value of the overlay: a literal of the field's type, or {field: /pointer}."""
    if "$ref" in prop:
        return {"$ref": f"#/$defs/fcm{prop['$ref']}"}
    t, fmt = prop.get("type"), prop.get("format")
    if t == "object":
        if prop.get("additionalProperties", {}).get("type") == "string":
            return {"type": "object", "additionalProperties": {"$ref": "#/$defs/source"}}
        return {"type": "object", "description": "Free JSON: any value; {field: /pointer} keeps the event value's JSON type."}
    if t == "string" and "enum" not in prop and fmt is None:
        return {"$ref": "#/$defs/source"}
    literal = {
        "boolean": {"type": "boolean"},
        "integer": {"type": "integer", "minimum": -2147483648, "maximum": 2147483647},
        "number": {"type": "number"},
    }.get(t)
    if t == "string":
        if "enum" in prop:
            literal = {"enum": prop["enum"]}
        elif fmt == "google-duration":
            literal = {"type": "string", "pattern": "^[0-9]{1,12}(\\.[0-9]{1,9})?s$"}
        else:
            literal = {"type": "string", "format": "date-time"}
    return {"oneOf": [literal, {"$ref": "#/$defs/fcmField"}]}


def overlay_defs(doc):
    """The overlay's `$defs` lines for schemas/mapping.schema.json: one per message type."""
    schemas = doc["schemas"]
    names, todo = set(), ["Message"]
    while todo:  # the types the overlay reaches: not through a refused field (android_v2)
        name = todo.pop()
        if name in names:
            continue
        names.add(name)
        for prop_name, prop in schemas[name].get("properties", {}).items():
            ref = prop.get("$ref") or prop.get("items", {}).get("$ref")
            if ref and snake(prop_name) not in REFUSED.get(name, ()):
                todo.append(ref)
    defs = {
        "fcmField": {
            "type": "object", "additionalProperties": False, "required": ["field"],
            "properties": {"field": {"$ref": "#/$defs/pointer"}, "default": {"type": ["string", "number", "boolean"]}},
        }
    }
    for name in sorted(names):
        properties, required = {}, []
        for prop_name, prop in sorted(schemas[name].get("properties", {}).items(), key=lambda p: snake(p[0])):
            proto = snake(prop_name)
            if proto in REFUSED.get(name, ()) or prop.get("deprecated") or prop.get("readOnly"):
                continue
            value = {"type": "array", "items": value_schema(prop["items"])} if prop.get("type") == "array" else value_schema(prop)
            properties[proto] = value
            if camel(proto) != proto:
                properties[camel(proto)] = value
            if prop.get("description", "").startswith("Required."):
                required.append(proto)
        entry = {"type": "object", "additionalProperties": False}
        if required:  # in either spelling
            entry["allOf"] = [{"anyOf": [{"required": [r]}, {"required": [camel(r)]}]} for r in required]
        entry["properties"] = properties
        defs[f"fcm{name}"] = entry
    return [f'    "{key}": {json.dumps(value, separators=(", ", ": "))},' for key, value in defs.items()]


def with_overlay_defs(text, doc):
    """schemas/mapping.schema.json with its generated `fcm…` $defs (the lines after `"$defs": {`) replaced."""
    lines = text.split("\n")
    start = lines.index('  "$defs": {') + 1
    end = start
    while end < len(lines) and re.match(r'^    "fcm[A-Za-z0-9]*": \{', lines[end]):
        end += 1
    return "\n".join(lines[:start] + overlay_defs(doc) + lines[end:])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--fetch", action="store_true")
    parser.add_argument("--cache", default=os.path.join(ROOT, ".tools", "fcm"))
    args = parser.parse_args()
    wheel = fetch(args.cache)
    doc = document(wheel)
    if args.fetch:
        print(f"fcm-schema: {WHEEL} ok (fcm.v1.json revision {doc['revision']})")
        return
    stale = False
    for type_name, (output, test) in OUTPUTS.items():
        text = generate(doc, type_name, test)
        name = os.path.relpath(output, ROOT)
        if args.check:
            committed = open(output, encoding="utf-8").read() if os.path.exists(output) else ""
            if committed != text:
                sys.stdout.writelines(difflib.unified_diff(
                    committed.splitlines(True), text.splitlines(True), f"committed {name}", "generated now"))
                print(f"fcm-schema: {name} is not what scripts/fcm-schema.py generates: run it", file=sys.stderr)
                stale = True
            else:
                print(f"fcm-schema: {name} matches revision {doc['revision']}")
            continue
        with open(output, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"fcm-schema: wrote {name} (revision {doc['revision']})")
    committed = open(SCHEMA, encoding="utf-8").read()
    text = with_overlay_defs(committed, doc)
    name = os.path.relpath(SCHEMA, ROOT)
    if not args.check:
        with open(SCHEMA, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"fcm-schema: wrote the fcm overlay's $defs in {name}")
    elif committed != text:
        sys.stdout.writelines(difflib.unified_diff(
            committed.splitlines(True), text.splitlines(True), f"committed {name}", "generated now"))
        print(f"fcm-schema: the fcm overlay's $defs in {name} are not what scripts/fcm-schema.py generates: run it", file=sys.stderr)
        stale = True
    else:
        print(f"fcm-schema: the fcm overlay's $defs in {name} match revision {doc['revision']}")
    if stale:
        sys.exit(1)

if __name__ == "__main__":
    main()
