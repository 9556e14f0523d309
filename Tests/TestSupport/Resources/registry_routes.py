"""The Schema Registry emulator's endpoints: path segments to store calls, and the answers' shapes.

"API" is https://docs.confluent.io/platform/current/schema-registry/develop/api.html, "Cloud API:
NAME" the page https://docs.confluent.io/cloud/current/ccloud/NAME/ (same OpenAPI definitions),
"client" confluent-kafka 2.16.1's confluent_kafka/schema_registry/_sync/schema_registry_client.py.

`route` returns (status, payload, raw): raw answers are a bare schema string, not JSON.
"""

from registry_errors import RegistryError, parse_version


def not_found():
    # What the registry's REST layer answers for a path it does not serve.
    return RegistryError(404, 404, "HTTP 404 Not Found")


def with_schema(fields, stored):
    """`schemaType` is left out for AVRO, the default ("schemaType ... Defaults to AVRO", API:
    POST /subjects/(string: subject)/versions; the client reads a missing one as AVRO), and
    `references` when there are none."""
    if stored["schemaType"] != "AVRO":
        fields["schemaType"] = stored["schemaType"]
    if stored["references"]:
        fields["references"] = stored["references"]
    fields["schema"] = stored["schema"]
    return fields


def schema_request(payload):
    """The body of register and lookup: {"schema", "schemaType"?, "references"?}; the client
    also sends metadata and ruleSet when set, which the emulator ignores (the client sends
    Confluent-Accept-Unknown-Properties: true)."""
    if not isinstance(payload, dict):
        raise RegistryError(422, 422, "The request body must be a JSON object with a schema")
    schema_type = payload.get("schemaType") or "AVRO"
    references = []
    for r in payload.get("references") or []:
        if not (isinstance(r, dict) and isinstance(r.get("name"), str) and isinstance(r.get("subject"), str)
                and isinstance(r.get("version"), int)):
            raise RegistryError(422, 422, "A reference is {\"name\", \"subject\", \"version\"}: %r" % (r,))
        references.append({"name": r["name"], "subject": r["subject"], "version": r["version"]})
    return payload.get("schema"), schema_type, references


def schema_id(text):
    if not text.isdigit():
        raise not_found()  # the path's {id} is an int: anything else matches no resource
    return int(text)


def route(store, method, segments, query, payload):
    match (method, segments):
        case ("GET", []):
            return 200, {}, False

        # GET /schemas/ids/{id}: {"schema", "schemaType"?, "references"?}; 40403 if unknown.
        # `subject` and `format` are accepted; "format=serialized" asks for a Protobuf schema as
        # a base64 FileDescriptorProto (Cloud API: get-schema). The emulator answers with the
        # schema as it was registered: the client registers Protobuf in that form already.
        case ("GET", ["schemas", "ids", i]):
            return 200, with_schema({}, store.schema(schema_id(i))), False
        case ("GET", ["schemas", "ids", i, "schema"]):
            return 200, store.schema(schema_id(i))["schema"], True  # Cloud API: get-schema-only
        case ("GET", ["schemas", "ids", i, "subjects"]):
            return 200, sorted({p["subject"] for p in store.subject_versions_of(schema_id(i))}), False
        case ("GET", ["schemas", "ids", i, "versions"]):
            return 200, store.subject_versions_of(schema_id(i)), False
        case ("GET", ["schemas", "types"]):
            return 200, ["JSON", "PROTOBUF", "AVRO"], False

        case ("GET", ["subjects"]):
            prefix = query.get("subjectPrefix", "")
            return 200, sorted(s for s in store.subjects if s.startswith(prefix)), False
        case ("GET", ["subjects", subject, "versions"]):
            return 200, [e["version"] for e in store.versions(subject)], False

        # GET /subjects/{subject}/versions/{version}: {"subject", "id", "version", "schemaType"?,
        # "references"?, "schema"}; 40401 / 40402 / 42202 (Cloud API: get-schema-by-version).
        # The client resolves references with it (?deleted=true, and format=serialized for
        # Protobuf).
        case ("GET", ["subjects", subject, "versions", v]):
            entry = store.version_entry(subject, parse_version(v))
            fields = {"subject": subject, "version": entry["version"], "id": entry["id"]}
            return 200, with_schema(fields, store.schema(entry["id"])), False
        case ("GET", ["subjects", subject, "versions", v, "schema"]):
            entry = store.version_entry(subject, parse_version(v))
            return 200, store.schema(entry["id"])["schema"], True
        case ("GET", ["subjects", subject, "versions", v, "referencedby"]):
            return 200, store.referenced_by(subject, parse_version(v)), False

        # POST /subjects/{subject}/versions: {"id": N} (Cloud API: register, whose example
        # answer is {"id": ...}). The client takes the id and keeps the schema it sent.
        case ("POST", ["subjects", subject, "versions"]):
            text, schema_type, references = schema_request(payload)
            return 200, {"id": store.register(subject, schema_type, text, references)}, False

        # POST /subjects/{subject}: "returns the schema string along with its globally unique
        # identifier, its version under this subject and the subject name" (Cloud API:
        # look-up-schema-under-subject). The Protobuf serializer reads `version` from it to
        # build its references.
        case ("POST", ["subjects", subject]):
            text, schema_type, references = schema_request(payload)
            entry = store.lookup(subject, schema_type, text, references)
            fields = {"subject": subject, "id": entry["id"], "version": entry["version"]}
            return 200, with_schema(fields, store.schema(entry["id"])), False

        # Compatibility levels (API: /config). The emulator stores them and checks nothing.
        case ("GET", ["config"]):
            return 200, {"compatibilityLevel": store.compatibility(None, True)}, False
        case ("GET", ["config", subject]):
            level = store.compatibility(subject, query.get("defaultToGlobal", "").lower() == "true")
            return 200, {"compatibilityLevel": level}, False
        case ("PUT", ["config", *rest]) if len(rest) <= 1:
            level = payload.get("compatibility") if isinstance(payload, dict) else None
            return 200, {"compatibility": store.set_compatibility(rest[0] if rest else None, level)}, False

        case ("GET", ["mode"]):
            return 200, {"mode": "READWRITE"}, False

        # confluent-kafka 2.16's serializers name subjects with AssociatedNameStrategy by default:
        # they first ask GET /associations/resources/{namespace}/{topic}, and with no
        # association ("a 404 or an empty list", client: _sync/serde.py) fall back to
        # {topic}-value. The emulator keeps no associations: the empty list, as a registry with
        # the associations API answers for a topic that has none.
        case ("GET", ["associations", "resources", _, _]):
            return 200, [], False

    if segments[:1] in (["schemas"], ["subjects"], ["config"], ["mode"]) and method in ("GET", "POST", "PUT", "DELETE"):
        known = route_exists(segments)
        if known:
            raise RegistryError(405, 405, "HTTP 405 Method Not Allowed")
    raise not_found()


def route_exists(segments):
    """Whether a path is one of the emulator's resources (then another method is 405)."""
    shapes = (["schemas", "ids", "*"], ["schemas", "ids", "*", "schema"], ["schemas", "ids", "*", "subjects"],
              ["schemas", "ids", "*", "versions"], ["schemas", "types"], ["subjects"], ["subjects", "*"],
              ["subjects", "*", "versions"], ["subjects", "*", "versions", "*"],
              ["subjects", "*", "versions", "*", "schema"], ["subjects", "*", "versions", "*", "referencedby"],
              ["config"], ["config", "*"], ["mode"])
    return any(len(s) == len(segments) and all(a in ("*", b) for a, b in zip(s, segments)) for s in shapes)
