"""An OTLP/HTTP trace receiver for the tests: takes POST /v1/traces with a JSON body as the
OTLP specification defines it (https://opentelemetry.io/docs/specs/otlp/#otlphttp-request,
#json-protobuf-encoding), checks it against OpenTelemetry's own Protobuf definitions
(opentelemetry-proto, PyPI: ExportTraceServiceRequest), and appends each span to a file as a
JSON line. A body that does not parse strictly is answered 400 and written to the file as
{"invalid": reason}, so a test sees it.

OTLP's JSON differs from Protobuf's canonical JSON mapping in one way that matters here:
traceId, spanId and parentSpanId are hex strings, not base64. They are checked and turned
into base64 before json_format.Parse, which otherwise rejects unknown fields and wrong types.

    python3 otlp_receiver.py PORT OUTPUT_FILE      (PYTHONPATH: .tools/otlp)
"""
import base64
import json
import re
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

PORT, OUTPUT = int(sys.argv[1]), sys.argv[2]
HEX = {"traceId": 32, "spanId": 16, "parentSpanId": 16}


def hex_to_base64(node):
    """OTLP JSON's hex IDs as the Protobuf JSON mapping's base64, checked on the way."""
    if isinstance(node, list):
        for item in node:
            hex_to_base64(item)
    elif isinstance(node, dict):
        for key, value in list(node.items()):
            if key in HEX and isinstance(value, str):
                if not re.fullmatch("[0-9a-fA-F]{%d}" % HEX[key], value):
                    raise ValueError(f"{key} is not {HEX[key]} hex digits: {value!r}")
                node[key] = base64.b64encode(bytes.fromhex(value)).decode()
            else:
                hex_to_base64(value)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        try:
            if self.path != "/v1/traces":
                raise ValueError(f"path {self.path}")
            if self.headers.get("content-type", "").split(";")[0].strip() != "application/json":
                raise ValueError(f"content-type {self.headers.get('content-type')}")
            document = json.loads(body)
            hex_to_base64(document)
            request = ExportTraceServiceRequest()
            json_format.Parse(json.dumps(document), request, ignore_unknown_fields=False)
        except Exception as error:  # the test reads the reason
            self.answer(400, json.dumps({"code": 3, "message": str(error)}).encode())
            with open(OUTPUT, "a") as out:
                out.write(json.dumps({"invalid": str(error)}) + "\n")
            return
        with open(OUTPUT, "a") as out:
            for resource_spans in request.resource_spans:
                resource = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        record = json_format.MessageToDict(span)
                        for key in HEX:
                            value = getattr(span, key[0].lower() + re.sub("[A-Z]", lambda m: "_" + m.group(0).lower(), key[1:]))
                            if value:
                                record[key] = value.hex()
                        record["resource"] = resource
                        out.write(json.dumps(record) + "\n")
        self.answer(200, b"{}")  # an ExportTraceServiceResponse with no partial success

    def answer(self, status, body):
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
