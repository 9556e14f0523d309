#!/usr/bin/env bash
# The reliability suite at any size (docs/reliability.md): workers killed with -9 and restarted,
# a rolling restart, FCM storms, Kafka faults, a broker restart on durable storage, then a
# ledger of every event; plus the fuzz run of the mapping core. Prints `name: value` figures.
#
#   scripts/reliability.sh                                   the CI size: 20,000 events, 5 kills
#   scripts/reliability.sh --events 1000000 --kills 20       the full size (built optimized)
#   scripts/reliability.sh --seed 42                         another seeded schedule of faults
#
# Options: --events N, --kills N, --seed N; --rate N (events produced per second at most,
# default 4000: kills are spread over the production); --release (build the suite optimized;
# the default above 100,000 events, because a debug build of the in-process FCM emulator
# serves only a few hundred sends a second).
#
# A failure names its seed; the same seed replays the same kills, storms and inputs.
set -euo pipefail
cd "$(dirname "$0")/.."

events=20000 kills=5 seed=8 rate=4000 release=
while [ $# -gt 0 ]; do
    case "$1" in
        --events) events=$2; shift 2 ;;
        --kills) kills=$2; shift 2 ;;
        --seed) seed=$2; shift 2 ;;
        --rate) rate=$2; shift 2 ;;
        --release) release=1; shift ;;
        -h|--help) sed -n 2,15p "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "reliability.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
    esac
done
if [ -z "$release" ] && [ "$events" -gt 100000 ]; then release=1; fi

./scripts/setup.sh
if [ -n "$release" ]; then
    build=(-c release)
    swift build "${build[@]}" --build-tests -Xswiftc -enable-testing
else
    build=()
    swift build --build-tests
fi
export PUSHBRIDGE_TOOLS="$PWD/.tools"
export PUSHBRIDGE_RELIABILITY_EVENTS=$events PUSHBRIDGE_RELIABILITY_KILLS=$kills
export PUSHBRIDGE_RELIABILITY_SEED=$seed PUSHBRIDGE_RELIABILITY_RATE=$rate
echo "== reliability: $events events, $kills kills, seed $seed, at most $rate events/s${release:+, optimized build}"
LD_LIBRARY_PATH="$PWD/.tools/librdkafka${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    swift test "${build[@]}" --skip-build --filter 'ReliabilityTests|FuzzTests'
