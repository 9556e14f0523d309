#!/usr/bin/env bash
# Each C library is imported by one folder only (docs/architecture.md, "Layers"):
#   CRdKafka (librdkafka) under Sources/Kafka/RDKafka/
#   CCurl (libcurl)       under Sources/HTTP2/Curl/
#   CNghttp2 (nghttp2)    under Sources/HTTP2/Nghttp2/
#   COpenSSL (OpenSSL)    under Sources/HTTP2/TLS/
#   CSQLite (SQLite)      under Sources/SQLite/ (DeviceRegistry and RulesStore use it through the SQLite module)
# Everything else reaches them through those folders' Swift types. Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

status=0
check() {  # MODULE FOLDER
    local module=$1 folder=$2 offenders
    offenders=$(grep -rlE "^[[:space:]]*(@_implementationOnly[[:space:]]+|@preconcurrency[[:space:]]+|(public|package|internal|fileprivate|private)[[:space:]]+)*import[[:space:]]+$module([[:space:]]|$)" \
        Sources Tests --include='*.swift' | grep -v "^$folder" || true)
    if [ -n "$offenders" ]; then
        echo "check-layers: $module is imported outside $folder:"
        echo "$offenders" | sed 's/^/  /'
        status=1
    fi
}
check CRdKafka Sources/Kafka/RDKafka/
check CCurl Sources/HTTP2/Curl/
check CNghttp2 Sources/HTTP2/Nghttp2/
check COpenSSL Sources/HTTP2/TLS/
check CSQLite Sources/SQLite/
[ "$status" -eq 0 ] && echo "check-layers: ok (CRdKafka only in Sources/Kafka/RDKafka/, CCurl only in Sources/HTTP2/Curl/, CNghttp2 only in Sources/HTTP2/Nghttp2/, COpenSSL only in Sources/HTTP2/TLS/, CSQLite only in Sources/SQLite/)"
exit "$status"
