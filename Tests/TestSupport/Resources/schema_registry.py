#!/usr/bin/env python3
"""A Confluent-compatible Schema Registry for pushbridge's tests (standard library only).

No Schema Registry server can be installed here (Confluent's is Java from Confluent's own
repository), so this emulates the REST API that confluent-kafka's serializers and pushbridge use,
from Confluent's API reference: https://docs.confluent.io/platform/current/schema-registry/develop/api.html
("API" below) and the per-endpoint pages with their OpenAPI definitions under
https://docs.confluent.io/cloud/current/ccloud/ ("Cloud API: NAME" below). What the client
sends was read in confluent-kafka 2.16.1's confluent_kafka/schema_registry/_sync/
schema_registry_client.py ("client" below). The model (IDs, versions, checks) is in
registry_store.py beside this file; docs/testing.md lists the known differences.

    schema_registry.py --port P [--tls-cert F --tls-key F] [--user U --password P] [--state-file F]

Prints "listening on PORT" once it accepts connections.

Emulator-only endpoints (not Confluent's; no credentials needed, never faulted or logged):
    POST /_emulator/faults    {"status": 503, "count": N[, "path_prefix": "/schemas"]} the next N
                              registry requests (matching the prefix) get that status and an
                              error body; {"delay_ms": D} every later answer waits D ms (0: none);
                              {"clear": true} drops the faults still pending
    GET  /_emulator/requests  the registry requests served so far: [{"method", "target", "status", "body"}]
    DELETE /_emulator/requests  forgets them
"""

import argparse
import base64
import hmac
import json
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

from registry_routes import route
from registry_errors import RegistryError
from registry_store import Store

# API, "Content Types": "the only serialization format supported is JSON and the only version of
# the API is v1"; answers use the preferred application/vnd.schemaregistry.v1+json.
CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
# The request bodies the API accepts (API, "Content Types"; the client sends the first).
REQUEST_TYPES = ("application/vnd.schemaregistry.v1+json", "application/vnd.schemaregistry+json",
                 "application/json", "application/octet-stream")
MAX_BODY = 8 * 1024 * 1024


class Emulator:
    """The state the request threads share: the store, credentials, faults and the request log."""

    def __init__(self, store, credentials):
        self.store = store
        self.credentials = credentials
        self.lock = threading.Lock()
        self.faults = []  # [{"status", "count", "path_prefix"}]
        self.delay_ms = 0
        self.log = []

    def take_fault(self, path):
        with self.lock:
            for fault in self.faults:
                if fault["count"] > 0 and path.startswith(fault.get("path_prefix", "")):
                    fault["count"] -= 1
                    return fault["status"]
            return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the client's httpx session expects
    server_version = "pushbridge-schema-registry-emulator"

    def setup(self):
        super().setup()
        # The TLS handshake happens here, on this connection's thread, not in the accept loop.
        if isinstance(self.connection, ssl.SSLSocket):
            self.connection.settimeout(10)
            self.connection.do_handshake()
            self.connection.settimeout(None)

    def log_message(self, format, *args):
        sys.stderr.write("%s %s\n" % (self.address_string(), format % args))

    def do_GET(self):
        self.handle_request("GET")

    def do_POST(self):
        self.handle_request("POST")

    def do_PUT(self):
        self.handle_request("PUT")

    def do_DELETE(self):
        self.handle_request("DELETE")

    def send(self, status, payload, raw=False, headers=()):
        body = (payload if raw else json.dumps(payload)).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", CONTENT_TYPE)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)
        return status

    def error(self, status, code, message, headers=()):
        # API, "Errors": {"error_code": <int>, "message": <string>}.
        return self.send(status, {"error_code": code, "message": message}, headers=headers)

    def read_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length < 0 or length > MAX_BODY:
            raise RegistryError(413, 413, "HTTP 413 Request Entity Too Large")
        return self.rfile.read(length).decode("utf-8", errors="replace") if length else ""

    def authorized(self):
        """HTTP Basic on every registry endpoint when the emulator has credentials (API:
        "Schema Registry security"; clients send basic.auth.user.info as a Basic header)."""
        if not self.emulator.credentials:
            return True
        header = self.headers.get("Authorization", "")
        if not header.startswith("Basic "):
            return False
        try:
            given = base64.b64decode(header[6:], validate=True).decode("utf-8")
        except ValueError:
            return False
        return hmac.compare_digest(given, self.emulator.credentials)

    def handle_request(self, method):
        split = urlsplit(self.path)
        # Split before decoding: a subject may hold an encoded "/" (the client quotes subjects
        # with safe='', and Protobuf reference subjects are file names like a/b.proto).
        segments = [unquote(s) for s in split.path.split("/")[1:]]
        if segments and segments[-1] == "":
            segments.pop()
        query = {k: v[-1] for k, v in parse_qs(split.query, keep_blank_values=True).items()}
        emulator = self.emulator
        try:
            body = self.read_body()
        except RegistryError as e:
            self.error(e.status, e.code, e.message)
            self.close_connection = True
            return
        if segments[:1] == ["_emulator"]:
            self.control(method, segments[1:], body)
            return
        if emulator.delay_ms:
            time.sleep(emulator.delay_ms / 1000)
        status = self.answer(method, segments, query, body)
        with emulator.lock:
            emulator.log.append({"method": method, "target": self.path, "status": status,
                                 "body": body[:65536]})

    def answer(self, method, segments, query, body):
        fault = self.emulator.take_fault(urlsplit(self.path).path)
        if fault is not None:
            # An injected failure, as a registry or a proxy in front of it would give it.
            return self.error(fault, 50001 if fault == 500 else fault, "Emulated failure (HTTP %d)" % fault)
        if not self.authorized():
            # What Confluent's registry answers without valid credentials (the body users
            # report, e.g. github.com/mostafa/xk6-kafka/issues/375), with the Basic challenge.
            return self.error(401, 401, "Unauthorized", headers=[("WWW-Authenticate", 'Basic realm="SchemaRegistry"')])
        if method in ("POST", "PUT"):
            kind = (self.headers.get("Content-Type") or REQUEST_TYPES[0]).split(";")[0].strip().lower()
            if kind not in REQUEST_TYPES:
                return self.error(415, 415, "HTTP 415 Unsupported Media Type")
        try:
            payload = None
            if method in ("POST", "PUT"):
                try:
                    payload = json.loads(body) if body else None
                except ValueError as e:
                    raise RegistryError(400, 400, "Unexpected character in the request body: %s" % e)
            status, result, raw = route(self.emulator.store, method, segments, query, payload)
            return self.send(status, result, raw=raw)
        except RegistryError as e:
            return self.error(e.status, e.code, e.message)

    def control(self, method, segments, body):
        emulator = self.emulator
        if method == "POST" and segments == ["faults"]:
            try:
                spec = json.loads(body or "{}")
                with emulator.lock:
                    if spec.get("clear"):
                        emulator.faults = []
                    if "delay_ms" in spec:
                        emulator.delay_ms = max(0, int(spec["delay_ms"]))
                    if "status" in spec:
                        emulator.faults.append({"status": int(spec["status"]), "count": int(spec.get("count", 1)),
                                                "path_prefix": str(spec.get("path_prefix", ""))})
            except (ValueError, TypeError) as e:
                self.error(400, 400, "bad fault: %s" % e)
                return
            with emulator.lock:
                emulator.faults = [f for f in emulator.faults if f["count"] > 0]
                self.send(200, {"faults": emulator.faults, "delay_ms": emulator.delay_ms})
        elif method == "GET" and segments == ["requests"]:
            with emulator.lock:
                self.send(200, list(emulator.log))
        elif method == "DELETE" and segments == ["requests"]:
            with emulator.lock:
                emulator.log.clear()
            self.send(200, [])
        else:
            self.error(404, 404, "HTTP 404 Not Found")


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        # A client that gives up on the handshake (it does not trust our CA) is not our error.
        sys.stderr.write("connection from %s ended: %s\n" % (client_address, sys.exc_info()[1]))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--tls-cert", help="PEM certificate: serve HTTPS")
    parser.add_argument("--tls-key", help="PEM private key of --tls-cert")
    parser.add_argument("--user", help="HTTP Basic user every registry request must give")
    parser.add_argument("--password", help="its password")
    parser.add_argument("--state-file", help="JSON file that keeps schemas and IDs across restarts")
    args = parser.parse_args()
    if bool(args.tls_cert) != bool(args.tls_key) or (args.user is None) != (args.password is None):
        parser.error("--tls-cert goes with --tls-key, --user with --password")

    credentials = "%s:%s" % (args.user, args.password) if args.user is not None else None
    Handler.emulator = Emulator(Store(args.state_file), credentials)
    server = Server((args.host, args.port), Handler)
    if args.tls_cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.tls_cert, args.tls_key)
        server.socket = context.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
    print("listening on %d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
