#!/usr/bin/env python3
"""One HTTP request to the Schema Registry emulator, for the Swift tests (standard library only):
HTTPS with a CA file and Basic credentials, which the tests' plain loopback client lacks.

    registry_request.py METHOD URL [--data JSON] [--ca FILE] [--user U --password P]

Prints {"status": N, "content_type": ..., "www_authenticate": ..., "body": text} on stdout,
error statuses included. Exits 2, with the reason on stderr, when no answer came (refused
connection, TLS verification failure).
"""

import argparse
import base64
import json
import ssl
import sys
import urllib.error
import urllib.request


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("method")
    parser.add_argument("url")
    parser.add_argument("--data")
    parser.add_argument("--ca")
    parser.add_argument("--user")
    parser.add_argument("--password", default="")
    parser.add_argument("--timeout", type=float, default=30)
    args = parser.parse_args()

    headers = {"Accept": "application/vnd.schemaregistry.v1+json"}
    body = None
    if args.data is not None:
        body = args.data.encode("utf-8")
        headers["Content-Type"] = "application/vnd.schemaregistry.v1+json"
    if args.user is not None:
        token = base64.b64encode(("%s:%s" % (args.user, args.password)).encode()).decode()
        headers["Authorization"] = "Basic " + token
    context = ssl.create_default_context(cafile=args.ca) if args.ca else None
    request = urllib.request.Request(args.url, data=body, headers=headers, method=args.method)
    try:
        with urllib.request.urlopen(request, timeout=args.timeout, context=context) as response:
            status, answer_headers, text = response.status, response.headers, response.read()
    except urllib.error.HTTPError as e:
        status, answer_headers, text = e.code, e.headers, e.read()
    except (urllib.error.URLError, OSError) as e:
        print("no answer from %s: %s" % (args.url, getattr(e, "reason", e)), file=sys.stderr)
        return 2
    print(json.dumps({
        "status": status,
        "content_type": answer_headers.get("Content-Type"),
        "www_authenticate": answer_headers.get("WWW-Authenticate"),
        "body": text.decode("utf-8", errors="replace"),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
