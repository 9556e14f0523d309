#!/usr/bin/env python3
"""Produces `user.welcome` events, as the end-to-end tests' WelcomeEvents does, with
confluent-kafka (scripts/setup.sh installs it into .tools/python; run with
PYTHONPATH=.tools/python).

For tests whose broker lives in a network namespace of its own (NetworkNamespace), where no
Kafka client of the test process may run: this runs inside it.

  produce_events.py --bootstrap HOST:PORT --topic NAME --count N --prefix P [--rate R]

--rate: at most R events a second, evenly spread (live traffic); unset, as fast as it can.

Event i has the token and the id `P-i`, which is also its key. Prints one JSON line,
{"produced": N, "ends": {"PARTITION": next offset, ...}}; exits 1 if any record failed.
"""

import argparse
import json
import sys
import time

from confluent_kafka import Producer


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--rate", type=float)
    args = parser.parse_args()

    producer = Producer({"bootstrap.servers": args.bootstrap, "enable.idempotence": False, "linger.ms": 5})
    ends = {}
    failures = []

    def delivered(error, message):
        if error is not None:
            failures.append(str(error))
        else:
            ends[message.partition()] = max(ends.get(message.partition(), 0), message.offset() + 1)

    started = time.monotonic()
    for i in range(args.count):
        if args.rate:
            wait = started + i / args.rate - time.monotonic()
            if wait > 0:
                producer.poll(wait)
        token = f"{args.prefix}-{i}"
        value = json.dumps({"type": "user.welcome", "id": token, "name": "N", "token": token}, separators=(",", ":"))
        while True:
            try:
                producer.produce(args.topic, key=token.encode(), value=value.encode(), on_delivery=delivered)
                break
            except BufferError:
                producer.poll(0.05)
        producer.poll(0)
    left = producer.flush(60)
    if failures or left:
        print(json.dumps({"failures": failures[:5], "undelivered": left}), file=sys.stderr)
        sys.exit(1)
    print(json.dumps({"produced": args.count, "ends": {str(p): o for p, o in sorted(ends.items())}}))


if __name__ == "__main__":
    main()
