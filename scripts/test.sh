#!/usr/bin/env bash
# Runs every test from a fresh machine: installs what is missing (scripts/setup.sh), builds,
# checks deploy/ (scripts/check-deploy.sh), then runs the suite twice where the Kafka runtime
# matters (see docs/testing.md):
#   1. all tests with librdkafka 2.16 from .tools (tansu needs librdkafka >= 2.1);
#   2. the mock-cluster Kafka tests again with Debian's librdkafka 2.0.2, the library we link.
# Test brokers and servers are started by the tests themselves on free loopback ports.
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/setup.sh
export PUSHBRIDGE_TOOLS="$PWD/.tools"

echo "== build"
swift build --build-tests

if [ $# -eq 0 ]; then
    echo "== deploy/: Dockerfile lint, manifests rendered and validated, alert rules (docs/operations.md)"
    ./scripts/check-deploy.sh
fi

echo "== tests (librdkafka $(basename "$(readlink -f .tools/librdkafka/librdkafka.so.1)"))"
LD_LIBRARY_PATH="$PWD/.tools/librdkafka${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" swift test --skip-build "$@"

if [ $# -eq 0 ]; then
    echo "== Kafka mock-cluster tests with Debian's librdkafka"
    swift test --skip-build --filter 'KafkaCommitAndFaultTests|KafkaConfigurationTests'
fi
