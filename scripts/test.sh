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

# Tests run in parallel, so a failure's lines can be far from the end of a long log: each run
# is also written to .build/test-logs/, and a failing run reprints its failures last.
logs=.build/test-logs
mkdir -p "$logs"
run_tests() {  # NAME ARGS...: swift test, teed to $logs/NAME.log
    local name=$1; shift
    local status=0
    swift test --skip-build "$@" 2>&1 | tee "$logs/$name.log" || status=$?
    if [ "$status" -ne 0 ]; then
        echo "== FAILED ($name, exit $status); the failures, from $logs/$name.log:"
        grep -a -A4 -E '^✘|error:|Fatal error|Crash' "$logs/$name.log" | grep -av '|FAIL|' | head -150
        return "$status"
    fi
}

echo "== tests (librdkafka $(basename "$(readlink -f .tools/librdkafka/librdkafka.so.1)"))"
LD_LIBRARY_PATH="$PWD/.tools/librdkafka${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" run_tests all "$@"

if [ $# -eq 0 ]; then
    echo "== Kafka mock-cluster tests with Debian's librdkafka"
    run_tests debian-librdkafka --filter 'KafkaCommitAndFaultTests|KafkaConfigurationTests'
fi
