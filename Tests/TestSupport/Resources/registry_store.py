"""The Schema Registry emulator's model: schemas with global IDs, subjects with versions, the
compatibility configuration, and the JSON file that keeps them across a restart.

Written for pushbridge's tests from Confluent's Schema Registry API reference (the pages are
named next to each behaviour; "API" below means
https://docs.confluent.io/platform/current/schema-registry/develop/api.html, and "Cloud API"
the per-endpoint pages under https://docs.confluent.io/cloud/current/ccloud/, which carry the
same OpenAPI definitions). Standard library only. Thread-safe: every public method takes the
store's lock.
"""

import base64
import binascii
import json
import os
import re
import threading

from registry_errors import (
    INVALID_COMPATIBILITY, INVALID_SCHEMA, SCHEMA_NOT_FOUND, SUBJECT_COMPATIBILITY_NOT_CONFIGURED, SUBJECT_NOT_FOUND,
    VERSION_NOT_FOUND, RegistryError,
)
from schema_checks import check_avro, invalid, protobuf_wire_is_valid

SCHEMA_TYPES = ("AVRO", "JSON", "PROTOBUF")
COMPATIBILITY_LEVELS = (
    "BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE", "FULL", "FULL_TRANSITIVE", "NONE",
)
BASE64 = re.compile(r"^[A-Za-z0-9+/]+={0,2}$")


class Store:
    """Schemas, subjects and configuration; saved to `path` (JSON) after every change."""

    def __init__(self, path=None):
        self.lock = threading.RLock()
        self.path = path
        # Every schema once, in ID order: {"id", "schemaType", "schema", "references"}.
        self.schemas = []
        # subject -> [{"version", "id"}], in version order.
        self.subjects = {}
        # "" is the global level; a subject's own level under its name.
        self.config = {"": "BACKWARD"}
        if path and os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                state = json.load(f)
            self.schemas = state["schemas"]
            self.subjects = state["subjects"]
            self.config = state["config"]

    def save(self):
        if not self.path:
            return
        temporary = self.path + ".tmp"
        with open(temporary, "w", encoding="utf-8") as f:
            json.dump({"schemas": self.schemas, "subjects": self.subjects, "config": self.config}, f)
        os.replace(temporary, self.path)

    # MARK: validation

    def canonical(self, schema_type, text, references):
        """The stored form of a schema, after the checks that make the API answer 42201 ("Error
        code 42201 indicates an invalid schema or schema type", Cloud API: register). AVRO and
        JSON are stored as compact JSON, so that whitespace does not make a second schema (the
        registry compares parsed schemas); PROTOBUF as sent (text or base64 descriptor)."""
        if schema_type not in SCHEMA_TYPES:
            raise invalid("unknown schema type '%s'" % schema_type)
        if not isinstance(text, str) or not text.strip():
            raise invalid("empty schema")
        for reference in references:
            # A reference names a subject and version that must exist (API: "Schema references").
            self.version_entry(reference["subject"], reference["version"], code=INVALID_SCHEMA)
        if schema_type == "PROTOBUF":
            compact = text.strip()
            if BASE64.match(compact) and len(compact) % 4 == 0:
                try:
                    raw = base64.b64decode(compact, validate=True)
                except binascii.Error:
                    raw = None
                if raw is not None and not protobuf_wire_is_valid(raw):
                    raise invalid("the base64 FileDescriptorProto is not a protobuf message")
            return text
        try:
            parsed = json.loads(text)
        except ValueError as e:
            raise invalid("not JSON (%s)" % e)
        if schema_type == "AVRO":
            known = set()
            for reference in references:
                entry = self.version_entry(reference["subject"], reference["version"], code=INVALID_SCHEMA)
                known |= self.avro_defined(self.schema(entry["id"]))
            check_avro(parsed, None, known)
        elif not isinstance(parsed, (dict, bool)):
            raise invalid("a JSON Schema is an object or a boolean")
        return json.dumps(parsed, separators=(",", ":"), ensure_ascii=False)

    def avro_defined(self, stored):
        """The full names a stored Avro schema (and what it references) defines."""
        names = set()
        for reference in stored["references"]:
            entry = self.version_entry(reference["subject"], reference["version"], code=INVALID_SCHEMA)
            names |= self.avro_defined(self.schema(entry["id"]))
        check_avro(json.loads(stored["schema"]), None, names)
        return names

    # MARK: reading

    def schema(self, schema_id):
        """GET /schemas/ids/{id}: 40403 for an unknown ID (Cloud API: get-schema)."""
        with self.lock:
            if isinstance(schema_id, int) and 1 <= schema_id <= len(self.schemas):
                return self.schemas[schema_id - 1]
            raise RegistryError(404, SCHEMA_NOT_FOUND, "No schema has the ID %s" % schema_id)

    def versions(self, subject):
        with self.lock:
            if subject not in self.subjects:
                raise RegistryError(404, SUBJECT_NOT_FOUND, "Subject '%s' does not exist" % subject)
            return list(self.subjects[subject])

    def version_entry(self, subject, version, code=None):
        """A subject's version (None: the latest): 40401 or 40402 as the API's
        GET /subjects/{subject}/versions/{version} answers; in a reference, 42201 instead."""
        with self.lock:
            try:
                entries = self.versions(subject)
                matches = [e for e in entries if version in (None, -1) or e["version"] == version]
                if not matches:
                    raise RegistryError(404, VERSION_NOT_FOUND, "The subject has no version %s" % version)
                return matches[-1]
            except RegistryError as e:
                if code is None:
                    raise
                raise invalid("reference %s version %s: %s" % (subject, version, e.message))

    def subject_versions_of(self, schema_id):
        """Every (subject, version) with this ID (GET /schemas/ids/{id}/versions)."""
        with self.lock:
            self.schema(schema_id)
            return [{"subject": s, "version": e["version"]}
                    for s in sorted(self.subjects) for e in self.subjects[s] if e["id"] == schema_id]

    def referenced_by(self, subject, version):
        with self.lock:
            entry = self.version_entry(subject, version)
            ref = (subject, entry["version"])
            return [s["id"] for s in self.schemas
                    if any((r["subject"], r["version"]) == ref for r in s["references"])]

    # MARK: changes

    def find(self, schema_type, text, references):
        """The ID of an identical schema (type, canonical text and references), or None."""
        for stored in self.schemas:
            if (stored["schemaType"], stored["schema"], stored["references"]) == (schema_type, text, references):
                return stored["id"]
        return None

    def register(self, subject, schema_type, text, references):
        """POST /subjects/{subject}/versions. "If the same schema is registered under a different
        subject, the same identifier will be returned. However, the version of the schema may be
        different under different subjects" (Cloud API: register). A schema the subject already
        has is not a new version. No compatibility check: the emulator never answers 409."""
        with self.lock:
            canonical = self.canonical(schema_type, text, references)
            schema_id = self.find(schema_type, canonical, references)
            if schema_id is None:
                schema_id = len(self.schemas) + 1
                self.schemas.append({"id": schema_id, "schemaType": schema_type,
                                     "schema": canonical, "references": references})
            entries = self.subjects.setdefault(subject, [])
            if not any(e["id"] == schema_id for e in entries):
                entries.append({"version": (entries[-1]["version"] + 1) if entries else 1, "id": schema_id})
            self.save()
            return schema_id

    def lookup(self, subject, schema_type, text, references):
        """POST /subjects/{subject}: "Error code 40401 indicates subject not found. Error code
        40403 indicates schema not found" (Cloud API: look-up-schema-under-subject)."""
        with self.lock:
            entries = self.versions(subject)
            try:
                canonical = self.canonical(schema_type, text, references)
            except RegistryError:
                canonical = None
            schema_id = self.find(schema_type, canonical, references) if canonical else None
            for entry in entries:
                if entry["id"] == schema_id:
                    return entry
            raise RegistryError(404, SCHEMA_NOT_FOUND, "The subject has no such schema")

    def compatibility(self, subject, default_to_global):
        """GET /config[/{subject}]: a subject without a level of its own is 40408 unless
        defaultToGlobal=true (Cloud API: get-subject-level-config)."""
        with self.lock:
            key = subject or ""
            if key in self.config:
                return self.config[key]
            if default_to_global:
                return self.config[""]
            raise RegistryError(404, SUBJECT_COMPATIBILITY_NOT_CONFIGURED,
                                "Subject '%s' has no compatibility level of its own" % subject)

    def set_compatibility(self, subject, level):
        """PUT /config[/{subject}]: 42203 for a level that is not one of the API's seven."""
        with self.lock:
            if level not in COMPATIBILITY_LEVELS:
                raise RegistryError(422, INVALID_COMPATIBILITY, "Invalid compatibility level: %s" % level)
            self.config[subject or ""] = level
            self.save()
            return level
