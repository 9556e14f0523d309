#!/usr/bin/env python3
"""A TCP relay whose connections can go silent: what a client sees when a path dies without a
word behind a hop that stays up (a proxy whose tunnel went dead, a NAT that forgot the flow).

  silent_relay.py --listen PORT --upstream HOST:PORT

Relays every connection to the upstream, both ways. On SIGUSR1 every connection open at that
moment goes silent: nothing more is read from or written to either side, no FIN, no RST; the
kernel still acknowledges what the client sends until its buffers fill. Connections made later
are relayed as before. SIGUSR2 frees the silent ones again. Prints "listening" once it listens,
and "silenced N" for each SIGUSR1.
"""

import argparse
import selectors
import signal
import socket
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--listen", type=int, required=True)
    parser.add_argument("--upstream", required=True)
    args = parser.parse_args()
    host, port = args.upstream.rsplit(":", 1)

    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", args.listen))
    server.listen(128)
    server.setblocking(False)
    selector = selectors.DefaultSelector()
    selector.register(server, selectors.EVENT_READ)
    peers = {}  # socket -> the socket it relays to
    silent = set()
    signals = {"silence": 0, "free": 0}
    signal.signal(signal.SIGUSR1, lambda *_: signals.__setitem__("silence", signals["silence"] + 1))
    signal.signal(signal.SIGUSR2, lambda *_: signals.__setitem__("free", signals["free"] + 1))
    # Spawned by a thread that may block them (the test process's), and a blocked signal waits.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1, signal.SIGUSR2})
    print("listening", flush=True)

    def close(sock):
        other = peers.pop(sock, None)
        for s in (sock, other):
            if s is None:
                continue
            peers.pop(s, None)
            silent.discard(s)
            try:
                selector.unregister(s)
            except (KeyError, ValueError):
                pass
            s.close()

    while True:
        if signals["silence"]:
            signals["silence"] = 0
            newly = [s for s in peers if s not in silent]
            for s in newly:
                silent.add(s)
                selector.unregister(s)
            print(f"silenced {len(newly) // 2}", flush=True)
        if signals["free"]:
            signals["free"] = 0
            for s in list(silent):
                silent.discard(s)
                selector.register(s, selectors.EVENT_READ)
        try:
            events = selector.select(timeout=0.1)
        except InterruptedError:
            continue
        for key, _ in events:
            sock = key.fileobj
            if sock is server:
                try:
                    client, _ = server.accept()
                except BlockingIOError:
                    continue
                try:
                    upstream = socket.create_connection((host, int(port)), timeout=5)
                except OSError:
                    client.close()
                    continue
                for s in (client, upstream):
                    s.setblocking(True)
                    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                peers[client], peers[upstream] = upstream, client
                selector.register(client, selectors.EVENT_READ)
                selector.register(upstream, selectors.EVENT_READ)
                continue
            if sock in silent or sock not in peers:
                continue
            try:
                data = sock.recv(65536)
            except OSError:
                data = b""
            if not data:
                close(sock)
                continue
            try:
                peers[sock].sendall(data)
            except OSError:
                close(sock)


if __name__ == "__main__":
    sys.exit(main())
