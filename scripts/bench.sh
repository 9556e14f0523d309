#!/usr/bin/env bash
# Benchmarks, printed as `name: value` lines (method and results: docs/benchmarks.md).
#   scripts/bench.sh            all
#   scripts/bench.sh kafka      kafka_consume_messages_per_second from tansu
#   scripts/bench.sh http2      http2_requests_per_second to a static TLS HTTP/2 nginx, 100 streams, through
#                               the libcurl engine, then http2_nghttp2_* through the nghttp2 engine (FCM's
#                               default); then bare libcurl in C (scripts/bench/bare_curl_h2.c) the same way
#   scripts/bench.sh mapping    mapping_events_per_second, one core, a typical event; then the same event
#                               as Confluent's Avro and Protobuf serializers write it (mapping_avro_*,
#                               mapping_protobuf_*: decode with the cached writer schema + map)
#   scripts/bench.sh dates      zone_offset_ns, quiet_window_contains_ns (22:00–07:30), zone_cached_lookup_ns:
#                               Europe/Berlin from the OS tzdata at instants over 2026–27; *_footer_ns: in 2040,
#                               past the file's last transition (the POSIX TZ footer's rule)
#   scripts/bench.sh flow-control the engine's per-event bookkeeping (receive, done, the pause/resume check) with
#                               4, 64 and 512 partitions: flow_control_touched_* (the check of the one partition an
#                               event touched) against flow_control_full_* (every partition) in ns (FLOW_BENCH_EVENTS)
#   scripts/bench.sh rules      rules_off/on_microseconds_per_event: an event to a user's two devices mapped
#                               without and with per-user rules (a category, quiet hours in Europe/Berlin);
#                               rules_added_microseconds_per_event, what the rules add (docs/rules.md);
#                               *_one_device_*: to a user with one device; *_instructions_per_event: callgrind
#   scripts/bench.sh rekey      the spike of caps/dedup's re-key hop on tansu (issue 55, design §5.2): CPU per event of
#                               reading the source (rekey_source_*), of re-keying it by user into a second topic
#                               (stage1), and of reading that with a reserved and a sent fact written to a changelog and
#                               read back (stage2); rekey_added_cpu_us_per_event = stage1 + stage2 - source, the
#                               broker's the same; rekey_readback_p50/p99_ms, reservation to read-back; rekey_callbacks_*: the same with
#                               KafkaProducer.send(_:onDelivery:), no task or continuation per record
#   scripts/bench.sh rules-store the rules store (docs/benchmarks.md#rules-store): RULES_STORE_BENCH_NOTIFICATIONS
#                               (default 500,000: 1M facts, in time order) restored into an empty file in batches
#                               of 500 (restore seconds per million facts), the tail's facts/s on the filled file,
#                               both as CPU µs per fact too, the tail's batches' p99 and max (ms) and the reads
#                               another thread makes meanwhile (p99, max µs), bytes per notification, cap query
#                               and dedup verdict latency (µs); first the store in memory (CPU µs per fact, bytes per
#                               notification) and on it rules_store_protocol_cpu_microseconds_per_push, a capped push's
#                               own steps on one thread with no Kafka (the exactness protocol's floor)
#                               (pushbridge-bench rules-store --cache-mb N: another page cache than 16 MB)
#   scripts/bench.sh fcm        fcm_sends_per_second through FCMClient to the static stub and to the emulator
#   scripts/bench.sh e2e        tansu → pushbridge run → static HTTP/2 stub: e2e_events_per_second,
#                               cpu_us_per_event, peak_rss_mb; then produce→ack latency at 5,000/s
#   scripts/bench.sh rules-engine what cap costs a worker per event (issue 55): the peer's mapping without a cap, with
#                               a cap per device on a topic keyed by device (direct mode; memory: the same with
#                               rules.state_store: memory), and on one keyed by position (re-key mode);
#                               rules_engine_{off,cap,memory,rekey}_cpu_us_per_event and
#                               rules_engine_{cap,memory,rekey}_cpu_percent_of_off_median (RULES_ENGINE_BENCH_ROUNDS, _EVENTS)
#   scripts/bench.sh rules-restore a new owner of a caps/dedup state partition restoring it from tansu into an empty
#                               rules store: RULES_RESTORE_BENCH_NOTIFICATIONS (default 100,000: 200,000 facts);
#                               rules_restore_seconds_per_million_facts, and the worker's CPU for it
#   scripts/bench.sh timers     the timer engine of deferred delivery (issue 56 plan step 4) on tansu: TIMERS_BENCH_TIMERS
#                               (50,000) timers due at TIMERS_BENCH_RATE (5,000/s) from 20 s on, held, forwarded and
#                               fired; timers_cpu_us_per_timer, records per timer, bytes, lateness p50/p99/max, peak RSS;
#                               TIMERS_BENCH_CONSUMER_PROPERTIES=k=v,…: other fetch sizes for the engine
#   scripts/bench.sh timers-pending memory with many timers pending (issue 56: flat): for each N of
#                               TIMERS_PENDING_BENCH_COUNTS (10000,100000,1000000), on a fresh tansu and timer topic
#                               (18 levels × 2 buckets), one process writes N timers due uniformly 1–8 h ahead
#                               (timers_write_seconds_pending_*), then a second runs a timer engine until what it
#                               holds stops changing: timers_rss_mb_pending_{10k,100k,1m} (VmRSS, idle),
#                               timers_ingest_seconds_*, timers_waiting_in_memory_*, timers_idle_cpu_percent_* (and
#                               the broker's); per round (_rN, TIMERS_PENDING_BENCH_ROUNDS: 3), then medians and
#                               timers_rss_mb_pending_1m_minus_10k (target: within 10 MB);
#                               TIMERS_PENDING_BENCH_CONSUMER_PROPERTIES=k=v,…: other fetch sizes for the engine
#   scripts/bench.sh registry   the device registry: 10M devices (5M users × 2) loaded into a store directly,
#                               reopened, looked up from 4 tasks (p50/p99), RSS, file size; then 500k users
#                               through tansu with the follower, and a restart (REGISTRY_BENCH_USERS,
#                               REGISTRY_BENCH_KAFKA_USERS; the file goes to $REGISTRY_BENCH_DIR or a temp dir)
#   scripts/bench.sh latency    the same with default settings against a stub answering after 0, 20,
#                               100 and 300 ms with 100 streams per connection, as FCM allows: events/s
#                               (and % of 0 ms, at the end, in any order), whole run and steady
#                               (20%→80% of the events finished: no ramp, no tail), CPU per event,
#                               connections opened, threads, peak RSS (and its anonymous part);
#                               then at 2,000 events/s: CPU per event, p99 produce→ack; then capped
#                               (fcm.max_sends_per_second: LATENCY_BENCH_CAP, default 5000; 0: no such
#                               run): the rate the stub saw, and its most in any 1 s and any 100 ms, as % of
#                               the cap (SWEEP_TRACE=1 also prints the arrivals per 100 ms)
#                               (SWEEP_TRACE=1: the worker's sends in flight, limit, connections,
#                               events in flight, paused partitions each second, or every SWEEP_TRACE_MS;
#                               SWEEP_THREAD_CPU=1: its CPU per event by thread); the stub's CPU per event
#                               and the machine's busy share; r0 first: nginx's cheapest 0 ms answer, the
#                               old baseline (LATENCY_BENCH_DELAYS=r0,0,20,100,300; LATENCY_BENCH_SECONDS=10);
#                               then the HTTP/2 client alone at each answer time with 1,000 and 3,000
#                               requests in flight: requests/s, latency, CPU per request, peak RSS
#                               (LATENCY_BENCH_IN_FLIGHT=300,1000,…), and at 2,000 requests/s
#                               (LATENCY_BENCH_RATE): CPU per request at partial load, beside bare
#                               libcurl in C at the same rate (bare_curl_dN_rate_2000_*) and, at 0 ms,
#                               flat out (bare_curl_d0_*): what libcurl itself costs at partial load
#   scripts/bench.sh peer       pushbridge beside the Go peer (../shared/bench/peer-go, built with Debian's
#                               golang-go into .tools/peer-go) on one tansu and the latency stub, at 0 and
#                               100 ms, in rounds whose order alternates: events/s (at the stub), CPU per
#                               event, peak RSS of each, medians, and the pairs pushbridge won (not in `all`)
#   scripts/bench.sh netfault   how long connections that die without a word stall delivery
#                               (netfault_*_stall_seconds): NetworkFaultTests, each a worker, tansu and
#                               the emulator in a network namespace whose firewall blackholes FCM, broker,
#                               token-endpoint or proxy connections, drops 10% of packets, or takes FCM out
#                               of reach, at 150 events/s (a debug build: the stalls are timeouts, not CPU;
#                               needs root and iptables; docs/reliability.md#network-faults)
# Builds pushbridge-bench in release mode; starts its servers on free loopback ports and stops
# them on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh >/dev/null
which=${1:-all}
if [ "$which" = netfault ]; then
    swift build --build-tests >/dev/null
    log=$(mktemp)
    status=0
    PUSHBRIDGE_TOOLS="$PWD/.tools" LD_LIBRARY_PATH="$PWD/.tools/librdkafka${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        swift test --skip-build --filter NetworkFaultTests >"$log" 2>&1 || status=$?
    grep -a -E '^netfault_|skipped' "$log"
    [ "$status" -eq 0 ] || grep -a -A3 -E '^✘' "$log" | head -40
    rm -f "$log"
    exit "$status"
fi
swift build -c release --product pushbridge-bench >/dev/null
# PUSHBRIDGE_BENCH_BINARY=path: the same for the in-process benchmarks (timers, rules-engine's bench side…).
bench=${PUSHBRIDGE_BENCH_BINARY:-$(swift build -c release --show-bin-path)/pushbridge-bench}
if [ "$which" = all ] || [ "$which" = e2e ] || [ "$which" = latency ] || [ "$which" = peer ] || [ "$which" = rules-engine ]; then swift build -c release --product pushbridge >/dev/null; fi
# PUSHBRIDGE_BENCH_WORKER=path: measure another build of the worker (an older commit's, to
# compare in one run: figures from different runs of a noisy machine do not compare).
worker=${PUSHBRIDGE_BENCH_WORKER:-$(swift build -c release --show-bin-path)/pushbridge}
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 200); do (echo >/dev/tcp/127.0.0.1/"$1") 2>/dev/null && return 0; sleep 0.05; done; echo "port $1 never opened" >&2; return 1; }

if [ "$which" = all ] || [ "$which" = mapping ]; then
    for format in json avro protobuf; do
        "$bench" mapping --events "${MAPPING_BENCH_EVENTS:-200000}" --rounds 5 --format "$format"
    done
    # Instructions per event: the same figure on every run, however noisy the machine.
    # (callgrind: two runs of different lengths, so start-up cancels out; valgrind cannot read
    # Swift 6.3's debug info, so it runs a stripped copy.)
    if command -v valgrind >/dev/null; then
        cp "$bench" "$work/bench-stripped" && strip -g "$work/bench-stripped"
        count() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$work/bench-stripped" mapping --events "$1" --rounds 0 --format "$2" 2>&1 |
            sed -n 's/.*Collected : //p'; }
        for format in json avro protobuf; do
            a=$(count 5000 "$format"); b=$(count 25000 "$format")
            name=mapping; [ "$format" = json ] || name="mapping_$format"
            echo "${name}_instructions_per_event: $(( (b - a) / 20000 ))"
        done
    fi
fi

if [ "$which" = all ] || [ "$which" = dates ]; then
    "$bench" dates --lookups "${DATES_BENCH_LOOKUPS:-2000000}" --rounds 5
fi

if [ "$which" = all ] || [ "$which" = flow-control ]; then
    "$bench" flow-control --events "${FLOW_BENCH_EVENTS:-1000000}" --rounds 5
fi

if [ "$which" = all ] || [ "$which" = rules ]; then
    "$bench" rules --events "${RULES_BENCH_EVENTS:-100000}" --rounds 5
    # Instructions per event of each case, as for mapping above.
    if command -v valgrind >/dev/null; then
        cp "$bench" "$work/bench-stripped" && strip -g "$work/bench-stripped"
        count() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$work/bench-stripped" rules --events "$1" --rounds 0 --case "$2" 2>&1 |
            sed -n 's/.*Collected : //p'; }
        for c in rules_off rules_on rules_off_one_device rules_on_one_device; do
            a=$(count 5000 "$c"); b=$(count 25000 "$c")
            echo "${c}_instructions_per_event: $(( (b - a) / 20000 ))"
        done
    fi
fi
if [ "$which" = all ] || [ "$which" = rules-store ]; then
    "$bench" rules-store --dir "${RULES_STORE_BENCH_DIR:-$work}" --notifications "${RULES_STORE_BENCH_NOTIFICATIONS:-500000}"
fi

start_tansu() {  # sets tansu_port; creates the topics given
    tansu_port=$(free_port)
    .tools/bin/tansu broker --listener-url "tcp://127.0.0.1:$tansu_port" --advertised-listener-url "tcp://127.0.0.1:$tansu_port" \
        --storage-engine memory://tansu/ >"$work/tansu-$tansu_port.log" 2>&1 &
    pids+=($!)
    wait_port "$tansu_port"
    for t in "$@"; do .tools/bin/tansu topic create --broker "tcp://127.0.0.1:$tansu_port" --partitions 4 "$t" >/dev/null; done
}

start_nginx() {  # sets nginx_port; the same configuration as the HTTP/2 client tests, without the access log
    nginx_port=$(free_port)
    if [ ! -f "$work/ca.crt" ]; then
        openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=bench CA" -keyout "$work/ca.key" -out "$work/ca.crt" 2>/dev/null
        openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout "$work/server.key" -out "$work/server.csr" 2>/dev/null
        printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >"$work/san.ext"
        openssl x509 -req -in "$work/server.csr" -CA "$work/ca.crt" -CAkey "$work/ca.key" -CAcreateserial -days 2 \
            -extfile "$work/san.ext" -out "$work/server.crt" 2>/dev/null
    fi
    sed -e "s#{{DIR}}#$work#g" -e "s#{{PORT}}#$nginx_port#g" -e "s#access_log .*;#access_log off;#" \
        Tests/TestSupport/Resources/nginx-h2.conf.template >"$work/nginx.conf"
    /usr/sbin/nginx -p "$work" -c "$work/nginx.conf" &
    pids+=($!)
    wait_port "$nginx_port"
}

start_latency_stub() {  # sets latency_port (TLS, answers after /dN) and status_port (plain HTTP, /nginx_status)
    latency_port=$(free_port)
    status_port=$(free_port)
    sed -e "s#{{DIR}}#$work#g" -e "s#{{PORT}}#$latency_port#g" -e "s#{{STATUS_PORT}}#$status_port#g" \
        scripts/bench/nginx-fcm-latency.conf.template >"$work/nginx-latency.conf"
    /usr/sbin/nginx -p "$work" -c "$work/nginx-latency.conf" &
    pids+=($!)
    wait_port "$latency_port"
}

if [ "$which" = all ] || [ "$which" = kafka ]; then
    start_tansu bench
    LD_LIBRARY_PATH="$PWD/.tools/librdkafka" "$bench" kafka --bootstrap "127.0.0.1:$tansu_port" --topic bench \
        --messages "${KAFKA_BENCH_MESSAGES:-200000}"
fi

if [ "$which" = all ] || [ "$which" = rekey ]; then
    start_tansu rekey-source rekey-by-subject rekey-changelog
    LD_LIBRARY_PATH="$PWD/.tools/librdkafka" "$bench" rekey --bootstrap "127.0.0.1:$tansu_port" \
        --topics rekey-source,rekey-by-subject,rekey-changelog --events "${REKEY_BENCH_EVENTS:-100000}" --broker-pid "${pids[-1]}"
fi

if [ "$which" = all ] || [ "$which" = rules-restore ]; then
    start_tansu rules-changelog
    LD_LIBRARY_PATH="$PWD/.tools/librdkafka" "$bench" rules-restore --bootstrap "127.0.0.1:$tansu_port" \
        --topic rules-changelog --dir "${RULES_STORE_BENCH_DIR:-$work}" --notifications "${RULES_RESTORE_BENCH_NOTIFICATIONS:-100000}"
fi

if [ "$which" = all ] || [ "$which" = timers ]; then
    start_tansu
    # levels × buckets partitions: 8 levels (1 s … 128 s) × 2 buckets.
    .tools/bin/tansu topic create --broker "tcp://127.0.0.1:$tansu_port" --partitions 16 bench-timers >/dev/null
    LD_LIBRARY_PATH="$PWD/.tools/librdkafka" "$bench" timers --bootstrap "127.0.0.1:$tansu_port" --topic bench-timers \
        --timers "${TIMERS_BENCH_TIMERS:-50000}" --rate "${TIMERS_BENCH_RATE:-5000}" --levels 8 --buckets 2 \
        --consumer-properties "${TIMERS_BENCH_CONSUMER_PROPERTIES:-}"
fi

if [ "$which" = all ] || [ "$which" = timers-pending ]; then
    # Each N in processes and on a broker of its own, so the figures compare: the writer's
    # allocations are not the engine's, and tansu (in memory) starts empty. What the engine holds
    # depends on when its holds land, so TIMERS_PENDING_BENCH_ROUNDS (3) rounds, then medians.
    figures="$work/timers-pending-figures"
    counts=${TIMERS_PENDING_BENCH_COUNTS:-10000,100000,1000000}
    for round in $(seq "${TIMERS_PENDING_BENCH_ROUNDS:-3}"); do
        for n in ${counts//,/ }; do
            start_tansu
            # 18 levels (1 s … 36.4 h, the default) × 2 buckets: timers 1–8 h ahead rest at levels 11–14.
            .tools/bin/tansu topic create --broker "tcp://127.0.0.1:$tansu_port" --partitions 36 bench-timers-pending >/dev/null
            for mode in timers-write timers-pending; do
                LD_LIBRARY_PATH="$PWD/.tools/librdkafka" "$bench" "$mode" --bootstrap "127.0.0.1:$tansu_port" --topic bench-timers-pending \
                    --timers "$n" --levels 18 --buckets 2 --broker-pid "${pids[-1]}" \
                    --consumer-properties "${TIMERS_PENDING_BENCH_CONSUMER_PROPERTIES:-}" | sed "s/^\([a-z0-9_]*\):/\1_r$round:/" | tee -a "$figures"
            done
            kill "${pids[-1]}" 2>/dev/null || true
            wait "${pids[-1]}" 2>/dev/null || true
            unset 'pids[-1]'
        done
    done
    python3 - "$figures" <<'PY'
import collections, re, statistics, sys
v = collections.defaultdict(list)
for line in open(sys.argv[1]):
    m = re.match(r"(timers_\w+)_r\d+: ([\d.]+)", line)
    if m: v[m[1]].append(float(m[2]))
for name, xs in v.items():
    print(f"{name}: {statistics.median(xs):.1f}")
    if name.startswith("timers_rss_mb_pending_"): print(f"{name}_min: {min(xs):.1f}\n{name}_max: {max(xs):.1f}")
a, b = v.get("timers_rss_mb_pending_10k"), v.get("timers_rss_mb_pending_1m")
if a and b: print(f"timers_rss_mb_pending_1m_minus_10k: {statistics.median(b) - statistics.median(a):.1f}")
PY
fi

if [ "$which" = all ] || [ "$which" = http2 ]; then
    start_nginx
    for engine in libcurl nghttp2; do
        "$bench" http2 --url "https://127.0.0.1:$nginx_port/v1/projects/bench/messages:send" --ca "$work/ca.crt" \
            --requests "${HTTP2_BENCH_REQUESTS:-100000}" --streams "${HTTP2_BENCH_STREAMS:-100}" --engine "$engine"
    done
    # The calibration: bare libcurl in C, same server, body size, streams and options.
    if command -v cc >/dev/null; then
        cc -O2 -o "$work/bare_curl_h2" scripts/bench/bare_curl_h2.c -lcurl
        "$work/bare_curl_h2" "https://127.0.0.1:$nginx_port/v1/projects/bench/messages:send" "$work/ca.crt" \
            "${HTTP2_BENCH_REQUESTS:-100000}" "${HTTP2_BENCH_STREAMS:-100}"
    fi
fi

stub_service_account() {  # a service account whose token_uri is the stub's /token
    [ -f "$work/service-account.json" ] && return 0
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$work/sa.key" 2>/dev/null
    python3 - "$work/sa.key" "https://127.0.0.1:$nginx_port/token" >"$work/service-account.json" <<'PY'
import json, sys
print(json.dumps({"type": "service_account", "project_id": "bench", "client_email": "bench@bench.iam.gserviceaccount.com",
                  "private_key": open(sys.argv[1]).read(), "token_uri": sys.argv[2]}))
PY
}

if [ "$which" = all ] || [ "$which" = fcm ]; then
    [ -n "${nginx_port:-}" ] || start_nginx
    stub_service_account
    "$bench" fcm --url "https://127.0.0.1:$nginx_port" --ca "$work/ca.crt" --service-account "$work/service-account.json" \
        --sends "${FCM_BENCH_SENDS:-50000}"
    # Two connections, two libcurl threads: what fcm.connections buys when the CPU is there.
    "$bench" fcm --url "https://127.0.0.1:$nginx_port" --ca "$work/ca.crt" --service-account "$work/service-account.json" \
        --sends "${FCM_BENCH_SENDS:-50000}" --connections 2
    "$bench" fcm-emulator --sends "${FCM_EMULATOR_BENCH_SENDS:-20000}"
fi

if [ "$which" = all ] || [ "$which" = e2e ]; then
    [ -n "${nginx_port:-}" ] || start_nginx
    stub_service_account
    start_tansu bench-events bench-dead-letter bench-invalidations
    LD_LIBRARY_PATH="$PWD/.tools/librdkafka" "$bench" e2e --bootstrap "127.0.0.1:$tansu_port" --topic bench-events \
        --worker "$worker" --dir "$work" --endpoint "https://127.0.0.1:$nginx_port" --ca "$work/ca.crt" \
        --service-account "$work/service-account.json" --events "${E2E_BENCH_EVENTS:-100000}"
    # The same with outcome records (topics.outcomes): outcomes_e2e_events_per_second, …
    start_tansu bench-events bench-dead-letter bench-invalidations bench-outcomes
    LD_LIBRARY_PATH="$PWD/.tools/librdkafka" "$bench" e2e --bootstrap "127.0.0.1:$tansu_port" --topic bench-events \
        --worker "$worker" --dir "$work" --endpoint "https://127.0.0.1:$nginx_port" --ca "$work/ca.crt" \
        --service-account "$work/service-account.json" --events "${E2E_BENCH_EVENTS:-100000}" --outcomes bench-outcomes
    # With tracing on (spans to the stub's /v1/traces): every event sampled, then none of them
    # (sample_ratio 0.000001: the sampling decision and the header scan, no span).
    for run in "1 tracing_sampled_" "0.000001 tracing_unsampled_"; do
        read -r ratio prefix <<<"$run"
        start_tansu bench-events bench-dead-letter bench-invalidations
        LD_LIBRARY_PATH="$PWD/.tools/librdkafka" "$bench" e2e --bootstrap "127.0.0.1:$tansu_port" --topic bench-events \
            --worker "$worker" --dir "$work" --endpoint "https://127.0.0.1:$nginx_port" --ca "$work/ca.crt" \
            --service-account "$work/service-account.json" --events "${E2E_BENCH_EVENTS:-100000}" --tracing-ratio "$ratio" --prefix "$prefix"
    done
    start_tansu latency-events bench-dead-letter bench-invalidations
    LD_LIBRARY_PATH="$PWD/.tools/librdkafka" "$bench" e2e-latency --bootstrap "127.0.0.1:$tansu_port" --topic latency-events \
        --worker "$worker" --dir "$work" --endpoint "https://127.0.0.1:$nginx_port" --ca "$work/ca.crt" \
        --service-account "$work/service-account.json" --rate "${E2E_LATENCY_RATE:-5000}" --seconds "${E2E_LATENCY_SECONDS:-10}"
fi

if [ "$which" = all ] || [ "$which" = registry ]; then
    start_tansu bench-registry
    registry_dir=${REGISTRY_BENCH_DIR:-$work}
    LD_LIBRARY_PATH="$PWD/.tools/librdkafka" "$bench" registry --dir "$registry_dir" \
        --users "${REGISTRY_BENCH_USERS:-5000000}" --devices-per-user 2 \
        --bootstrap "127.0.0.1:$tansu_port" --kafka-users "${REGISTRY_BENCH_KAFKA_USERS:-500000}"
    rm -f "$registry_dir"/registry-bench*.sqlite*
fi

if [ "$which" = all ] || [ "$which" = latency ]; then
    [ -n "${nginx_port:-}" ] || start_nginx  # also makes the CA and the server certificate
    stub_service_account
    start_latency_stub
    delays=${LATENCY_BENCH_DELAYS:-r0,0,20,100,300}
    LATENCY_BENCH_IN_FLIGHT=${LATENCY_BENCH_IN_FLIGHT:-1000,3000}
    topics=()
    # r0: nginx's cheapest answer (return 200, body not read), the 0 ms path before 2026-11-25.
    stub_path() { case $1 in r*) echo "$1" ;; *) echo "d$1" ;; esac; }
    for d in ${delays//,/ }; do topics+=("sweep-$(stub_path "$d")-saturated" "sweep-$(stub_path "$d")-partial" "sweep-$(stub_path "$d")-capped"); done
    start_tansu bench-dead-letter bench-invalidations "${topics[@]}"
    LD_LIBRARY_PATH="$PWD/.tools/librdkafka" "$bench" e2e-sweep --bootstrap "127.0.0.1:$tansu_port" --worker "$worker" \
        --dir "$work" --base "https://127.0.0.1:$latency_port" --ca "$work/ca.crt" --service-account "$work/service-account.json" \
        --events "${LATENCY_BENCH_EVENTS:-60000}" --delays "$delays" --partial-rate "${LATENCY_BENCH_RATE:-2000}" --partial-seconds "${LATENCY_BENCH_SECONDS:-10}" \
        --stub-pid-file "$work/nginx-latency.pid" --cap "${LATENCY_BENCH_CAP:-5000}"
    # The HTTP/2 layer alone at the same answer times: N requests always in flight, 100 streams
    # per connection (LATENCY_BENCH_IN_FLIGHT, a list; docs/benchmarks.md).
    bare=
    if command -v cc >/dev/null; then
        cc -O2 -o "$work/bare_curl_h2" scripts/bench/bare_curl_h2.c -lcurl
        bare="$work/bare_curl_h2"
    fi
    for d in ${delays//,/ }; do
        d=$(stub_path "$d")
        for n in ${LATENCY_BENCH_IN_FLIGHT//,/ }; do
            "$bench" http2 --url "https://127.0.0.1:$latency_port/$d/v1/projects/bench/messages:send" --ca "$work/ca.crt" \
                --streams 100 --in-flight "$n" --requests $((n * 10)) | sed "s/^http2_/http2_${d}_in_flight_${n}_/"
        done
        # Partial load: the same client, and bare libcurl in C, at a fixed rate whatever the
        # answers (open loop), a batch every 5 ms; 10 s each.
        rate=${LATENCY_BENCH_RATE:-2000}
        url="https://127.0.0.1:$latency_port/$d/v1/projects/bench/messages:send"
        "$bench" http2 --url "$url" --ca "$work/ca.crt" --streams 100 --rate "$rate" --requests $((rate * 10)) |
            sed "s/^http2_/http2_${d}_rate_${rate}_/"
        if [ -n "$bare" ]; then
            case $d in r0 | d0) "$bare" "$url" "$work/ca.crt" 60000 100 | sed "s/^bare_curl_/bare_curl_${d}_/" ;; esac
            "$bare" "$url" "$work/ca.crt" $((rate * 10)) 100 "$rate" | sed "s/^bare_curl_open_/bare_curl_${d}_rate_${rate}_/"
        fi
    done
fi

if [ "$which" = all ] || [ "$which" = rules-engine ]; then
    # What cap costs per event (issue 55: at most 15% more CPU): pushbridge with the peer's mapping
    # and with it capped per device, on a topic keyed by device, in RULES_ENGINE_BENCH_ROUNDS (3)
    # rounds of RULES_ENGINE_BENCH_EVENTS (100000) events each, the order turning; a fresh tansu
    # each round. rules_engine_cap_cpu_percent_of_off_median: the capped runs' CPU per event as a
    # share of the plain ones', pair by pair.
    [ -n "${nginx_port:-}" ] || start_nginx
    stub_service_account
    [ -n "${latency_port:-}" ] || start_latency_stub
    figures="$work/rules-engine-figures"
    for round in $(seq "${RULES_ENGINE_BENCH_ROUNDS:-3}"); do
        start_tansu bench-dead-letter bench-invalidations "rules-r$round-off" "rules-r$round-cap" "rules-r$round-cap-changelog" \
            "rules-r$round-memory" "rules-r$round-memory-changelog" \
            "rules-r$round-rekey" "rules-r$round-rekey-changelog" "rules-r$round-rekey-by-subject"
        LD_LIBRARY_PATH="$PWD/.tools/librdkafka" "$bench" rules-engine --bootstrap "127.0.0.1:$tansu_port" --worker "$worker" \
            --dir "$work" --base "https://127.0.0.1:$latency_port" --ca "$work/ca.crt" --service-account "$work/service-account.json" \
            --status-port "$status_port" --round "$round" --events "${RULES_ENGINE_BENCH_EVENTS:-100000}" |
            sed "s/^rules_engine_/rules_engine_r${round}_/" | tee -a "$figures"
        kill "${pids[-1]}" 2>/dev/null || true
        wait "${pids[-1]}" 2>/dev/null || true
        unset 'pids[-1]'
    done
    python3 - "$figures" <<'PY'
import re, statistics, sys
v = {}
for line in open(sys.argv[1]):
    m = re.match(r"rules_engine_r(\d+)_(off|cap|memory|rekey)_(\w+): ([\d.]+)", line)
    if m: v[(int(m[1]), m[2], m[3])] = float(m[4])
rounds = sorted({r for r, _, _ in v})
for fig in ("cpu_us_per_event", "events_per_second", "peak_rss_mb"):
    for mode in ("off", "cap", "memory", "rekey"):
        xs = [v[(r, mode, fig)] for r in rounds if (r, mode, fig) in v]
        if xs: print(f"rules_engine_{mode}_{fig}_median: {statistics.median(xs):.1f}")
for mode in ("cap", "memory", "rekey"):
    pairs = [v[(r, mode, "cpu_us_per_event")] / v[(r, "off", "cpu_us_per_event")] * 100 for r in rounds
             if (r, mode, "cpu_us_per_event") in v and (r, "off", "cpu_us_per_event") in v]
    if pairs: print(f"rules_engine_{mode}_cpu_percent_of_off_median: {statistics.median(pairs):.1f}")
PY
fi

if [ "$which" = peer ]; then
    # pushbridge beside the Go peer (../shared/bench/peer-go, issue 59) on one tansu and one stub,
    # in rounds whose order alternates: PEER_BENCH_ROUNDS (5), PEER_BENCH_EVENTS (150000),
    # PEER_BENCH_DELAYS (0,100); PEER_BENCH_BASELINE=path runs that pushbridge build too, as a third
    # contender (peer_*_baseline_*), to measure a change in the same rounds. The peer is built with its own build.sh (Debian's golang-go)
    # into .tools/peer-go, again whenever its source changes.
    peer_src=${PEER_GO_DIR:-../shared/bench/peer-go}
    peer_out="$PWD/.tools/peer-go"
    if [ ! -x "$peer_out/bin/peer-go" ] || ! cmp -s "$peer_src/main.go" "$peer_out/main.go"; then
        if ! LIBRDKAFKA="$PWD/.tools/librdkafka/librdkafka.so.1" "$peer_src/build.sh" "$peer_out" >"$work/peer-build.log" 2>&1; then
            echo "peer-go: its build failed:" >&2
            tail -20 "$work/peer-build.log" >&2
            exit 1
        fi
    fi
    [ -n "${nginx_port:-}" ] || start_nginx  # the CA, the server certificate, /token
    stub_service_account
    start_latency_stub
    delays=${PEER_BENCH_DELAYS:-0,100}
    figures="$work/peer-figures"
    for round in $(seq "${PEER_BENCH_ROUNDS:-5}"); do
        topics=()
        for d in ${delays//,/ }; do topics+=("peer-d$d-r$round-pushbridge" "peer-d$d-r$round-baseline" "peer-d$d-r$round-peer"); done
        start_tansu bench-dead-letter bench-invalidations "${topics[@]}"  # a fresh one each round
        LD_LIBRARY_PATH="$PWD/.tools/librdkafka" "$bench" peer --bootstrap "127.0.0.1:$tansu_port" --worker "$worker" \
            --peer "$peer_out/bin/peer-go" --dir "$work" --base "https://127.0.0.1:$latency_port" --ca "$work/ca.crt" \
            --service-account "$work/service-account.json" --status-port "$status_port" --round "$round" \
            --events "${PEER_BENCH_EVENTS:-150000}" --delays "$delays" ${PEER_BENCH_BASELINE:+--baseline "$PEER_BENCH_BASELINE"} | sed "s/^peer_/peer_r${round}_/" | tee -a "$figures"
        kill "${pids[-1]}" 2>/dev/null || true
        wait "${pids[-1]}" 2>/dev/null || true
        unset 'pids[-1]'
    done
    # Medians over the rounds, and in how many rounds (pairs) pushbridge used less CPU per event
    # and moved at least as many events/s as the peer.
    python3 - "$figures" <<'PY'
import collections, re, statistics, sys
runs = collections.defaultdict(dict)  # (delay, figure) -> {(round, who): value}
for line in open(sys.argv[1]):
    m = re.match(r"peer_r(\d+)_(d\d+)_(pushbridge|baseline|peer)_(\w+): ([\d.]+)", line)
    if m:
        runs[(m[2], m[4])][(int(m[1]), m[3])] = float(m[5])
for (d, fig), v in sorted(runs.items()):
    for who in ("pushbridge", "baseline", "peer"):
        xs = [x for (r, w), x in v.items() if w == who]
        if xs:
            print(f"peer_{d}_{who}_{fig}_median: {statistics.median(xs):.1f}")
    rounds = sorted({r for r, _ in v})
    pairs = [(v[(r, "pushbridge")], v[(r, "peer")]) for r in rounds if (r, "pushbridge") in v and (r, "peer") in v]
    if fig == "cpu_us_per_event":
        print(f"peer_{d}_pairs: {len(pairs)}")
        print(f"peer_{d}_pushbridge_less_cpu_pairs: {sum(p < q for p, q in pairs)}")
    if fig == "events_per_second":
        print(f"peer_{d}_pushbridge_at_least_as_fast_pairs: {sum(p >= q for p, q in pairs)}")
    base = [(v[(r, "pushbridge")], v[(r, "baseline")]) for r in rounds if (r, "pushbridge") in v and (r, "baseline") in v]
    if base and fig in ("cpu_us_per_event", "events_per_second", "peak_rss_mb"):
        print(f"peer_{d}_pushbridge_{fig}_percent_of_baseline_median: {statistics.median(p / q * 100 for p, q in base):.1f}")
        print(f"peer_{d}_pushbridge_{fig}_below_baseline_pairs: {sum(p < q for p, q in base)}")
PY
fi
