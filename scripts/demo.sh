#!/usr/bin/env bash
# The README's first command: on a fresh Debian bookworm machine with Swift 6.3, installs what
# building needs (scripts/setup.sh --build: librdkafka-dev, libcurl4-openssl-dev, libnghttp2-dev,
# libssl-dev), builds, and
# runs `pushbridge demo`: an in-process Kafka cluster and the FCM emulator, the events in
# examples/events, every push as phones would show it. Arguments go to the demo
# (`./scripts/demo.sh --locale en,de --extra-events 20000`; `--help` lists them).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh --build
swift build --product pushbridge
exec "$(swift build --show-bin-path)/pushbridge" demo "$@"
