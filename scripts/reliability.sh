#!/usr/bin/env bash
# The reliability suite at any size (docs/reliability.md): workers killed with -9 and restarted,
# a rolling restart, FCM storms, Kafka faults, a broker restart on durable storage, then a
# ledger of every event; plus the fuzz run of the mapping core. Prints `name: value` figures.
#
#   scripts/reliability.sh                                   the CI size: 20,000 events, 5 kills
#   scripts/reliability.sh --events 1000000 --kills 20       the full size
#   scripts/reliability.sh --seed 42                         another seeded schedule of faults
#
# A failure names its seed; the same seed replays the same kills, storms and inputs.
set -euo pipefail
cd "$(dirname "$0")/.."

events=20000 kills=5 seed=8
while [ $# -gt 0 ]; do
    case "$1" in
        --events) events=$2; shift 2 ;;
        --kills) kills=$2; shift 2 ;;
        --seed) seed=$2; shift 2 ;;
        -h|--help) sed -n 2,10p "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "reliability.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
    esac
done

./scripts/setup.sh
swift build --build-tests
export PUSHBRIDGE_TOOLS="$PWD/.tools"
export PUSHBRIDGE_RELIABILITY_EVENTS=$events PUSHBRIDGE_RELIABILITY_KILLS=$kills PUSHBRIDGE_RELIABILITY_SEED=$seed
echo "== reliability: $events events, $kills kills, seed $seed"
LD_LIBRARY_PATH="$PWD/.tools/librdkafka${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    swift test --skip-build --filter 'ReliabilityTests|FuzzTests'
