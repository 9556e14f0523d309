#!/usr/bin/env python3
"""A Kafka SASL/SCRAM front for a broker that cannot log clients in itself (tansu 0.6.0).

    client --TLS--> nginx stream (KafkaTLSFront) --> this front (SASL/SCRAM) --> tansu (plaintext)

Each client connection must first log in here, as against an Apache Kafka broker's SASL
listener; after a successful login the bytes go both ways, unchanged, to the broker (one
upstream connection per client connection, opened at the client's first ApiVersions request or
at the login). Python 3.11 standard library only. Written from the specifications below, not from
any Kafka implementation's code:

  - Kafka protocol guide, https://kafka.apache.org/protocol: the size-prefixed framing, request
    header v1 (api_key, api_version, correlation_id, client_id) and v2 (v1 + tagged fields),
    response header v0 (correlation_id) and v1 (+ tagged fields; ApiVersions always answers
    with v0), compact (unsigned-varint) strings, bytes and arrays of flexible versions, and the
    messages ApiVersions (key 18), SaslHandshake (key 17, v0-1) and SaslAuthenticate (key 36,
    v0-2; v2 is flexible).
  - KIP-43 (SASL mechanisms and SaslHandshake): before authentication a SASL listener accepts
    ApiVersions and SaslHandshake only; an unsupported mechanism gets
    UNSUPPORTED_SASL_MECHANISM (33) with the enabled list, and the connection is closed. After a
    v0 handshake the SASL tokens travel as bare size-prefixed frames (no Kafka header).
  - KIP-84 (SCRAM-SHA-256 and SCRAM-SHA-512): the mechanisms, credentials as salt, StoredKey,
    ServerKey and iterations (at least 4096), the `tokenauth` extension (delegation tokens:
    not supported here, such a login is refused).
  - KIP-152 (SaslAuthenticate): after a v1 handshake each SASL token is the auth_bytes of a
    SaslAuthenticate request, and a failure is reported as SASL_AUTHENTICATION_FAILED (58) with
    an error message before the connection is closed. Kafka does not say why (the message names
    the mechanism only, so that it does not tell whether the user exists).
  - RFC 5802 (SCRAM) and RFC 7677 (SCRAM-SHA-256), with SHA-512 as KIP-84 adds it: client-first
    `n,[a=authzid],n=user,r=cnonce[,ext]`, server-first `r=cnonce+snonce,s=salt,i=4096`,
    client-final `c=biws,r=nonce,p=proof`, server-final `v=signature`. As in Kafka, the password
    is taken as its UTF-8 bytes (no SASLprep) and only `n` (no channel binding) is accepted.

Differences from a Kafka broker, on purpose: credentials come from the command line (Kafka's come
from AlterUserScramCredentials / kafka-configs and live in the cluster), each made with a fresh
random salt and 4096 iterations at start-up; no re-authentication (KIP-368: session_lifetime_ms
is always 0); no other SASL mechanism (PLAIN, GSSAPI, OAUTHBEARER) and no GSSAPI-style token
before the first Kafka request; requests other than ApiVersions, SaslHandshake and
SaslAuthenticate before the login close the connection without an answer.

Usage: kafka_scram_front.py --listen 127.0.0.1:PORT --upstream 127.0.0.1:PORT
                            --user NAME:PASSWORD [--user ...] [--mechanism SCRAM-SHA-512 ...]
Prints `kafka_scram_front: listening on 127.0.0.1:PORT` once it accepts connections and one line
per login (user, mechanism, outcome; never a password); stops on SIGTERM or SIGINT.
"""

import argparse
import asyncio
import base64
import errno
import hashlib
import hmac
import os
import secrets
import signal
import struct
import sys

API_VERSIONS, SASL_HANDSHAKE, SASL_AUTHENTICATE = 18, 17, 36
# The versions this front answers itself; ApiVersions responses advertise exactly these.
ANSWERED = {SASL_HANDSHAKE: (0, 1), SASL_AUTHENTICATE: (0, 2)}
NONE, UNSUPPORTED_SASL_MECHANISM, SASL_AUTHENTICATION_FAILED = 0, 33, 58
MECHANISMS = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}
ITERATIONS = 4096  # KIP-84's minimum, and kafka-configs' default
# Kafka's `sasl.server.max.receive.size` default: a larger frame before the login closes the
# connection.
MAX_RECEIVE = 524288


class Refused(Exception):
    """Closes the connection; `answer`, if any, is sent first."""

    def __init__(self, reason, answer=None):
        super().__init__(reason)
        self.answer = answer


# ---------------------------------------------------------------------------------------------
# Wire primitives (protocol guide, "Protocol Primitive Types")


class Reader:
    def __init__(self, data):
        self.data, self.at = data, 0

    def take(self, n):
        if n < 0 or self.at + n > len(self.data):
            raise ValueError("truncated")
        chunk = self.data[self.at : self.at + n]
        self.at += n
        return chunk

    def int16(self):
        return struct.unpack(">h", self.take(2))[0]

    def int32(self):
        return struct.unpack(">i", self.take(4))[0]

    def uvarint(self):
        value = shift = 0
        while True:
            byte = self.take(1)[0]
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
            shift += 7
            if shift > 28:
                raise ValueError("varint too long")

    def nullable_string(self):  # int16 length, -1 for null
        n = self.int16()
        return None if n < 0 else self.take(n).decode("utf-8")

    def bytes32(self):  # int32 length
        return self.take(self.int32())

    def compact_bytes(self):  # unsigned varint length + 1
        n = self.uvarint()
        if n == 0:
            raise ValueError("null bytes")
        return self.take(n - 1)

    def tagged_fields(self):  # skipped: none of them matters here
        for _ in range(self.uvarint()):
            self.uvarint()
            self.take(self.uvarint())

    def rest(self):
        return self.take(len(self.data) - self.at)


def uvarint(n):
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def string16(text):
    raw = text.encode("utf-8")
    return struct.pack(">h", len(raw)) + raw


def frame(payload):
    return struct.pack(">i", len(payload)) + payload


# ---------------------------------------------------------------------------------------------
# ApiVersions: forwarded to the broker; the answer must advertise what this front answers itself


def advertise_sasl(version, body):
    """The broker's ApiVersions response body with ANSWERED's keys at ANSWERED's versions.

    Unchanged if it already says so (tansu 0.6.0 lists SaslHandshake 0-1 and SaslAuthenticate
    0-2 even without --authentication) or if it is an error (UNSUPPORTED_VERSION comes as a v0
    body the client reads as such).
    """
    r = Reader(body)
    error = r.int16()
    if error != NONE:
        return body
    flexible = version >= 3
    count = r.uvarint() - 1 if flexible else r.int32()
    entries = []  # (key, min, max, raw tagged fields)
    for _ in range(count):
        key, low, high = struct.unpack(">hhh", r.take(6))
        start = r.at
        if flexible:
            r.tagged_fields()
        entries.append((key, low, high, body[start : r.at]))
    tail = r.rest()  # throttle_time_ms (v1+) and, when flexible, the tagged fields
    advertised = {key: (low, high) for key, low, high, _ in entries}
    if all(advertised.get(key) == span for key, span in ANSWERED.items()):
        return body
    entries = [e for e in entries if e[0] not in ANSWERED]
    entries += [(key, low, high, b"\x00" if flexible else b"") for key, (low, high) in ANSWERED.items()]
    entries.sort(key=lambda e: e[0])
    out = struct.pack(">h", error) + (uvarint(len(entries) + 1) if flexible else struct.pack(">i", len(entries)))
    for key, low, high, tags in entries:
        out += struct.pack(">hhh", key, low, high) + tags
    return out + tail


# ---------------------------------------------------------------------------------------------
# SCRAM (RFC 5802, RFC 7677; KIP-84)


class Credential:
    """What a Kafka broker stores for a SCRAM user: salt, StoredKey, ServerKey, iterations."""

    def __init__(self, digest, password):
        self.digest, self.salt, self.iterations = digest, secrets.token_bytes(32), ITERATIONS
        salted = hashlib.pbkdf2_hmac(digest, password.encode("utf-8"), self.salt, self.iterations)
        self.stored_key = hashlib.new(digest, self.hmac(salted, b"Client Key")).digest()
        self.server_key = self.hmac(salted, b"Server Key")

    def hmac(self, key, message):
        return hmac.new(key, message, self.digest).digest()


def sasl_name(text):
    """RFC 5802 saslname: `=2C` is `,` and `=3D` is `=`; any other `=` is malformed."""
    out, i = [], 0
    while i < len(text):
        if text[i] == "=":
            code = text[i + 1 : i + 3]
            if code not in ("2C", "3D"):
                raise ValueError("bad saslname escape")
            out.append("," if code == "2C" else "=")
            i += 3
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def attributes(text):
    """`k=v,k=v` to a list of (k, v), as RFC 5802 writes its messages."""
    pairs = []
    for part in text.split(","):
        if len(part) < 2 or part[1] != "=":
            raise ValueError(f"bad attribute {part!r}")
        pairs.append((part[0], part[2:]))
    return pairs


class ScramServer:
    """One login's server side: client-first -> server-first, client-final -> server-final.

    Raises ValueError when the client's message is malformed or its credentials are wrong; the
    caller answers every such case alike, as Kafka does.
    """

    def __init__(self, mechanism, credentials):
        self.mechanism, self.credentials = mechanism, credentials
        self.user = self.credential = None
        self.state = "client-first"

    def step(self, token):
        text = token.decode("utf-8")
        if self.state == "client-first":
            return self.client_first(text)
        if self.state == "client-final":
            return self.client_final(text)
        raise ValueError("SCRAM exchange already complete")

    def client_first(self, text):
        # gs2-header: "n," (no channel binding; Kafka refuses "y" and "p") [a=authzid] ","
        flag, authzid, bare = text.split(",", 2)
        if flag != "n":
            raise ValueError("channel binding is not supported")
        if authzid and not authzid.startswith("a="):
            raise ValueError("bad gs2 header")
        pairs = attributes(bare)
        if len(pairs) < 2 or pairs[0][0] != "n" or pairs[1][0] != "r":
            raise ValueError("client-first must start with n= and r=")
        self.user, nonce = sasl_name(pairs[0][1]), pairs[1][1]
        extensions = dict(pairs[2:])
        if not nonce or any(c == "," or not 0x21 <= ord(c) <= 0x7E for c in nonce):
            raise ValueError("bad client nonce")
        if extensions.get("tokenauth", "false").lower() == "true":
            raise ValueError("delegation tokens are not supported")
        if authzid and sasl_name(authzid[2:]) != self.user:
            raise ValueError("authorization id differs from the user name")
        self.credential = self.credentials.get(self.user)
        if self.credential is None:
            raise ValueError(f"unknown user {self.user!r}")
        self.gs2_header = f"{flag},{authzid},"
        self.nonce = nonce + base64.b64encode(secrets.token_bytes(24)).decode("ascii").replace(",", "")
        self.client_first_bare = bare
        self.server_first = f"r={self.nonce},s={base64.b64encode(self.credential.salt).decode()},i={self.credential.iterations}"
        self.state = "client-final"
        return self.server_first.encode("utf-8")

    def client_final(self, text):
        without_proof, _, proof_attr = text.rpartition(",p=")
        pairs = attributes(without_proof)
        if len(pairs) < 2 or pairs[0][0] != "c" or pairs[1][0] != "r":
            raise ValueError("client-final must start with c= and r=")
        if base64.b64decode(pairs[0][1], validate=True) != self.gs2_header.encode("utf-8"):
            raise ValueError("channel binding differs from the gs2 header")
        if pairs[1][1] != self.nonce:
            raise ValueError("nonce differs from the server's")
        proof = base64.b64decode(proof_attr, validate=True)
        c = self.credential
        auth_message = f"{self.client_first_bare},{self.server_first},{without_proof}".encode("utf-8")
        signature = c.hmac(c.stored_key, auth_message)
        if len(proof) != len(signature):
            raise ValueError("proof of the wrong length")
        client_key = bytes(a ^ b for a, b in zip(proof, signature))
        if not hmac.compare_digest(hashlib.new(c.digest, client_key).digest(), c.stored_key):
            raise ValueError("invalid client proof (wrong password)")
        self.state = "complete"
        return b"v=" + base64.b64encode(c.hmac(c.server_key, auth_message))


# ---------------------------------------------------------------------------------------------
# Per connection: Kafka's SASL state machine, then a pipe


class Connection:
    def __init__(self, front, reader, writer):
        self.front, self.reader, self.writer = front, reader, writer
        self.upstream = None  # (reader, writer), opened once
        self.peer = "%s:%s" % writer.get_extra_info("peername")[:2]

    def log(self, text):
        print(f"kafka_scram_front: {self.peer}: {text}", flush=True)

    async def read_frame(self, reader):
        size = struct.unpack(">i", await reader.readexactly(4))[0]
        if not 0 <= size <= MAX_RECEIVE:
            raise Refused(f"frame of {size} bytes before authentication")
        return await reader.readexactly(size)

    async def send(self, payload):
        self.writer.write(frame(payload))
        await self.writer.drain()

    async def open_upstream(self):
        if self.upstream is None:
            self.upstream = await asyncio.open_connection(*self.front.upstream)
        return self.upstream

    async def run(self):
        try:
            if await self.authenticate():
                await self.pipe()
        except asyncio.IncompleteReadError:
            pass  # the client went away (or only probed the port)
        except Refused as refusal:
            self.log(f"closed: {refusal}")
            if refusal.answer is not None:
                await self.send(refusal.answer)
        except (ConnectionError, OSError) as error:
            self.log(f"closed: {error}")
        except ValueError as error:
            self.log(f"closed: malformed request: {error}")
        finally:
            for w in (self.writer, self.upstream and self.upstream[1]):
                if w is not None:
                    w.close()

    async def authenticate(self):
        """KIP-43/KIP-152's states: ApiVersions (once, optional), SaslHandshake, then tokens."""
        versions_done = False
        while True:
            request = await self.read_frame(self.reader)
            r = Reader(request)
            key, version, correlation = r.int16(), r.int16(), r.int32()
            if key == API_VERSIONS and not versions_done:
                # Once, unless the broker refused the version: the client then asks again lower.
                versions_done = await self.api_versions(request, version)
            elif key == SASL_HANDSHAKE and ANSWERED[key][0] <= version <= ANSWERED[key][1]:
                r.nullable_string()  # client_id (request header v1)
                mechanism = r.nullable_string()
                enabled = self.front.mechanisms
                error = NONE if mechanism in enabled else UNSUPPORTED_SASL_MECHANISM
                answer = struct.pack(">ihi", correlation, error, len(enabled)) + b"".join(string16(m) for m in enabled)
                if error != NONE:
                    raise Refused(f"unsupported mechanism {mechanism!r}", answer)
                await self.send(answer)
                return await self.exchange(mechanism, framed=version >= 1)
            else:
                raise Refused(f"request key {key} v{version} before authentication")

    async def api_versions(self, request, version):
        up_reader, up_writer = await self.open_upstream()
        up_writer.write(frame(request))
        await up_writer.drain()
        response = await up_reader.readexactly(struct.unpack(">i", await up_reader.readexactly(4))[0])
        header, body = response[:4], response[4:]  # response header v0, always, for ApiVersions
        await self.send(header + advertise_sasl(version, body))
        return Reader(body).int16() == NONE

    async def exchange(self, mechanism, framed):
        """The SCRAM tokens: in SaslAuthenticate requests (handshake v1) or bare (v0)."""
        scram = ScramServer(mechanism, self.front.credentials[mechanism])
        failure = f"Authentication failed during authentication due to invalid credentials with SASL mechanism {mechanism}"
        while scram.state != "complete":
            request = await self.read_frame(self.reader)
            if not framed:
                try:
                    await self.send(scram.step(request))
                except (ValueError, UnicodeDecodeError) as problem:
                    raise Refused(f"{mechanism} login of {scram.user!r} refused: {problem}")  # v0: no way to say why
                continue
            r = Reader(request)
            key, version, correlation = r.int16(), r.int16(), r.int32()
            if key != SASL_AUTHENTICATE or not ANSWERED[key][0] <= version <= ANSWERED[key][1]:
                raise Refused(f"request key {key} v{version} during SASL authentication")
            r.nullable_string()  # client_id
            flexible = version >= 2
            if flexible:
                r.tagged_fields()  # request header v2
            token = r.compact_bytes() if flexible else r.bytes32()
            try:
                answer, error, message, reason = scram.step(token), NONE, None, None
            except (ValueError, UnicodeDecodeError) as problem:
                answer, error, message, reason = b"", SASL_AUTHENTICATION_FAILED, failure, problem
            out = struct.pack(">i", correlation) + (b"\x00" if flexible else b"")  # response header v1 / v0
            out += struct.pack(">h", error)
            if flexible:
                raw = None if message is None else message.encode("utf-8")
                out += uvarint(0 if raw is None else len(raw) + 1) + (raw or b"")
                out += uvarint(len(answer) + 1) + answer
            else:
                out += struct.pack(">h", -1) if message is None else string16(message)
                out += struct.pack(">i", len(answer)) + answer
            if version >= 1:
                out += struct.pack(">q", 0)  # session_lifetime_ms: no re-authentication (KIP-368)
            if flexible:
                out += b"\x00"
            if error != NONE:
                raise Refused(f"{mechanism} login of {scram.user!r} refused: {reason}", out)
            await self.send(out)
        self.log(f"{mechanism} login of {scram.user!r} succeeded")
        return True

    async def pipe(self):
        up_reader, up_writer = await self.open_upstream()

        async def copy(source, sink):
            try:
                while chunk := await source.read(65536):
                    sink.write(chunk)
                    await sink.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                sink.close()

        await asyncio.gather(copy(self.reader, up_writer), copy(up_reader, self.writer))


class Front:
    def __init__(self, upstream, users, mechanisms):
        self.upstream, self.mechanisms = upstream, mechanisms
        self.credentials = {m: {name: Credential(MECHANISMS[m], password) for name, password in users} for m in mechanisms}

    async def serve(self, host, port):
        try:
            server = await asyncio.start_server(lambda r, w: Connection(self, r, w).run(), host, port)
        except OSError as error:
            # "Address already in use" in these words: the test harness then tries another port.
            print(f"kafka_scram_front: cannot listen on {host}:{port}: {os.strerror(error.errno or errno.EINVAL)}", flush=True)
            sys.exit(1)
        stop = asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            asyncio.get_running_loop().add_signal_handler(sig, stop.set)
        print(f"kafka_scram_front: listening on {host}:{port}", flush=True)
        async with server:
            await stop.wait()
        print("kafka_scram_front: stopped", flush=True)


def address(text):
    host, _, port = text.rpartition(":")
    return host, int(port)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--listen", type=address, required=True, help="HOST:PORT to accept clients on")
    parser.add_argument("--upstream", type=address, required=True, help="the broker's plaintext HOST:PORT")
    parser.add_argument("--user", action="append", default=[], help="NAME:PASSWORD (repeatable)")
    parser.add_argument("--mechanism", action="append", choices=sorted(MECHANISMS), help="enabled (default: both)")
    args = parser.parse_args()
    users = [tuple(u.split(":", 1)) for u in args.user]
    if any(len(u) != 2 for u in users):
        parser.error("--user takes NAME:PASSWORD")
    front = Front(args.upstream, users, args.mechanism or sorted(MECHANISMS))
    asyncio.run(front.serve(*args.listen))


if __name__ == "__main__":
    main()
