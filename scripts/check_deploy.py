#!/usr/bin/env python3
"""Checks everything under deploy/ (run through scripts/check-deploy.sh, which installs the tools).

1. hadolint lints deploy/Dockerfile.
2. `kubectl kustomize` renders the base and the example overlay.
3. Every rendered object is validated: built-in kinds by kubernetes-validate (strict: unknown
   fields are errors), KEDA and Prometheus Operator kinds by deploy/kubernetes/crd-schemas.
4. The overlay's objects must fit together: every Secret, key, ConfigMap and ServiceAccount a pod
   or a TriggerAuthentication names exists; selectors match the pods; probes hit /healthz and
   /readyz on the port the config listens on; the grace period exceeds the drain budget; KEDA
   reads the group, topic and brokers the workers use.
5. promtool checks the alert rules and the Grafana dashboard's queries, and every pushbridge_*
   metric they read must be one the code exports.
6. The built pushbridge loads the rendered config with the pod's environment, and validates the
   rendered mappings.

Prints one `ok:` line per check and every problem found; exits 1 if there is any.
"""
import argparse
import base64
import functools
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import jsonschema
import kubernetes_validate
import yaml

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
KUBERNETES = DEPLOY / "kubernetes"
KUBERNETES_VERSION = "1.30.0"  # the oldest release the manifests are meant for
CRD_KINDS = {"ScaledObject", "TriggerAuthentication", "ServiceMonitor", "PrometheusRule"}

problems: list[str] = []


def problem(message: str) -> None:
    problems.append(message)
    print(f"FAIL: {message}")


def ok(message: str, since: int = -1) -> None:
    """Prints `message` unless a problem was found since `since` (a len(problems) taken earlier)."""
    if since < 0 or len(problems) == since:
        print(f"ok: {message}")


def run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, **kwargs)


# 1. The Dockerfile


def lint_dockerfile() -> None:
    start = len(problems)
    result = run(["hadolint", "--failure-threshold", "info", str(DEPLOY / "Dockerfile")])
    if result.returncode != 0:
        problem(f"hadolint deploy/Dockerfile:\n{result.stdout}{result.stderr}")
        return
    text = (DEPLOY / "Dockerfile").read_text()
    for needed, why in [("HEALTHCHECK", "a HEALTHCHECK"), ("\nUSER 10001", "a non-root USER"), ("/healthz", "the health endpoint")]:
        if needed not in text:
            problem(f"deploy/Dockerfile has no {why}")
    if text.count("\nFROM ") < 2:
        problem("deploy/Dockerfile is not a multi-stage build")
    ok("deploy/Dockerfile (hadolint, multi-stage, non-root, HEALTHCHECK)", start)


# 2 and 3. Render and validate


def render(directory: Path) -> list[dict]:
    result = run(["kubectl", "kustomize", str(directory)])
    if result.returncode != 0:
        problem(f"kubectl kustomize {directory.relative_to(ROOT)}: {result.stderr.strip()}")
        return []
    return [d for d in yaml.safe_load_all(result.stdout) if d]


def crd_schema(kind: str) -> dict:
    return json.loads((KUBERNETES / "crd-schemas" / f"{kind}.json").read_text())


def validate(objects: list[dict], where: str) -> None:
    start = len(problems)
    for o in objects:
        name = f"{where}: {o.get('kind')}/{o.get('metadata', {}).get('name')}"
        try:
            if o.get("kind") in CRD_KINDS:
                jsonschema.validate(o, crd_schema(o["kind"]))
            else:
                kubernetes_validate.validate(o, KUBERNETES_VERSION, strict=True)
        except jsonschema.ValidationError as e:
            problem(f"{name}: {'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}")
        except kubernetes_validate.ValidationError as e:
            problem(f"{name}: {'/'.join(map(str, e.path)) or '(top)'}: {e.message}")
        except kubernetes_validate.SchemaNotFoundError:
            problem(f"{name}: no schema for this kind; add one to deploy/kubernetes/crd-schemas")
    kinds = sorted({o["kind"] for o in objects})
    ok(f"{where}: {len(objects)} objects valid against Kubernetes {KUBERNETES_VERSION} and the CRD schemas ({', '.join(kinds)})", start)


# 4. Cross-references


def index(objects: list[dict]) -> dict:
    return {(o["kind"], o["metadata"]["name"]): o for o in objects}


def selects(selector: dict, labels: dict) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


def secret_value(objects: dict, name: str, key: str) -> str | None:
    secret = objects.get(("Secret", name))
    if secret is None or key not in secret.get("data", {}):
        return None
    return base64.b64decode(secret["data"][key]).decode()


def cross_check(objects: dict) -> dict:
    """Checks the overlay's references; returns what step 6 needs."""
    start = len(problems)
    by_kind = lambda kind: [o for (k, _), o in objects.items() if k == kind]
    sets = by_kind("StatefulSet")
    if len(sets) != 1:
        problem(f"expected one StatefulSet, found {len(sets)}")
        return {}
    sts = sets[0]
    pod = sts["spec"]["template"]
    pod_labels = pod["metadata"].get("labels", {})
    spec = pod["spec"]
    container = spec["containers"][0]

    if not selects(sts["spec"]["selector"]["matchLabels"], pod_labels):
        problem("the StatefulSet's selector does not match its pods")
    if ("ServiceAccount", spec.get("serviceAccountName")) not in objects:
        problem(f"ServiceAccount {spec.get('serviceAccountName')} is not in the render")

    # Volumes, and where they are mounted.
    mounts = {m["name"]: m["mountPath"] for m in container.get("volumeMounts", [])}
    mounted: dict[str, tuple[str, dict]] = {}  # mount path -> (kind, object)
    for volume in spec.get("volumes", []):
        if "configMap" in volume:
            ref = ("ConfigMap", volume["configMap"]["name"])
        elif "secret" in volume:
            ref = ("Secret", volume["secret"]["secretName"])
        else:
            continue
        if ref not in objects:
            problem(f"volume {volume['name']} names {ref[0]} {ref[1]}, which is not in the render")
            continue
        if volume["name"] not in mounts:
            problem(f"volume {volume['name']} is never mounted")
            continue
        mounted[mounts[volume["name"]]] = (ref[0], objects[ref])

    # Environment: secrets and the pod name.
    environment: dict[str, str] = {}
    for variable in container.get("env", []):
        if "value" in variable:
            environment[variable["name"]] = variable["value"]
        elif "secretKeyRef" in variable.get("valueFrom", {}):
            ref = variable["valueFrom"]["secretKeyRef"]
            value = secret_value(objects, ref["name"], ref["key"])
            if value is None:
                problem(f"env {variable['name']} reads key {ref['key']} of Secret {ref['name']}, which is not in the render")
            else:
                environment[variable["name"]] = value.strip()
        elif variable.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "metadata.name":
            environment[variable["name"]] = f"{sts['metadata']['name']}-0"

    # The config file the container is told to read.
    args = container.get("args", [])
    config_path = args[args.index("--config") + 1] if "--config" in args else None
    config_text = None
    for path, (kind, o) in mounted.items():
        if config_path and config_path.startswith(path + "/") and kind == "ConfigMap":
            config_text = o.get("data", {}).get(config_path[len(path) + 1:])
    if config_text is None:
        problem(f"--config {config_path} is not a file of a mounted ConfigMap")
        return {}
    config = yaml.safe_load(config_text)

    # Mappings and the service account live where the config says.
    for path in config.get("mappings", []):
        if path not in mounted or mounted[path][0] != "ConfigMap":
            problem(f"mappings path {path} is not a mounted ConfigMap")
    account = config.get("fcm", {}).get("service_account", "")
    directory, _, file = account.rpartition("/")
    if directory not in mounted or mounted[directory][0] != "Secret" or file not in mounted[directory][1].get("data", {}):
        problem(f"fcm.service_account {account} is not a key of a mounted Secret")

    # Probes, port, grace period.
    listen_port = int(str(config.get("http", {}).get("listen", "0.0.0.0:9464")).rsplit(":", 1)[1])
    ports = {p["name"]: p["containerPort"] for p in container.get("ports", [])}
    for probe, path in [("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")]:
        get = container.get(probe, {}).get("httpGet", {})
        port = ports.get(get.get("port"), get.get("port"))
        if get.get("path") != path or port != listen_port:
            problem(f"{probe} should GET {path} on port {listen_port} (http.listen), not {get.get('path')} on {port}")
    drain_seconds = config.get("delivery", {}).get("shutdown_timeout_ms", 30000) / 1000
    grace = spec.get("terminationGracePeriodSeconds", 30)
    if grace < drain_seconds + 10:
        problem(f"terminationGracePeriodSeconds {grace} leaves under 10 s after delivery.shutdown_timeout_ms ({drain_seconds:g} s) to commit and leave")
    if not config.get("kafka", {}).get("session_timeout_ms", 45000) / 1000 > 10:
        problem("kafka.session_timeout_ms is too short for a static member's restart")
    if spec.get("securityContext", {}).get("runAsUser") != 10001:
        problem("pods should run as the image's user, 10001")
    image = container.get("image", "")
    if ":" not in image.rsplit("/", 1)[-1] or image.endswith(":latest"):
        problem(f"image {image} has no pinned tag")

    # Service, PodDisruptionBudget, ServiceMonitor.
    service = objects.get(("Service", sts["spec"]["serviceName"]))
    if service is None or service["spec"].get("clusterIP") != "None":
        problem(f"serviceName {sts['spec']['serviceName']} is not a headless Service in the render")
    elif not selects(service["spec"]["selector"], pod_labels):
        problem("the Service does not select the workers")
    for pdb in by_kind("PodDisruptionBudget"):
        if not selects(pdb["spec"]["selector"]["matchLabels"], pod_labels):
            problem(f"PodDisruptionBudget {pdb['metadata']['name']} does not select the workers")
    for monitor in by_kind("ServiceMonitor"):
        if service is None or not selects(monitor["spec"]["selector"]["matchLabels"], service["metadata"].get("labels", {})):
            problem(f"ServiceMonitor {monitor['metadata']['name']} does not select the Service")
        for endpoint in monitor["spec"]["endpoints"]:
            if service is not None and endpoint.get("port") not in [p.get("name") for p in service["spec"]["ports"]]:
                problem(f"ServiceMonitor port {endpoint.get('port')} is not a port of the Service")
    annotations = pod["metadata"].get("annotations", {})
    if annotations.get("prometheus.io/port") != str(listen_port):
        problem("the prometheus.io/port annotation is not the http.listen port")

    # KEDA reads the lag of the group the workers are in.
    kafka = config["kafka"]
    for scaled in by_kind("ScaledObject"):
        target = scaled["spec"]["scaleTargetRef"]
        if (target.get("kind"), target["name"]) != ("StatefulSet", sts["metadata"]["name"]):
            problem(f"ScaledObject {scaled['metadata']['name']} does not scale the StatefulSet")
        low, high = scaled["spec"].get("minReplicaCount", 0), scaled["spec"].get("maxReplicaCount", 100)
        if not 1 <= low <= high:
            problem(f"ScaledObject replicas: need 1 ≤ min ({low}) ≤ max ({high})")
        for trigger in scaled["spec"]["triggers"]:
            if trigger["type"] != "kafka":
                continue
            m = trigger["metadata"]
            if m.get("consumerGroup") != kafka.get("group", "pushbridge"):
                problem(f"KEDA reads group {m.get('consumerGroup')}, the workers are in {kafka.get('group', 'pushbridge')}")
            if m.get("topic") and m["topic"] not in kafka.get("topics", []):
                problem(f"KEDA reads topic {m['topic']}, the workers consume {kafka.get('topics')}")
            if sorted(m.get("bootstrapServers", "").split(",")) != sorted(kafka.get("brokers", [])):
                problem(f"KEDA's bootstrapServers {m.get('bootstrapServers')} differ from kafka.brokers {kafka.get('brokers')}")
            if m.get("offsetResetPolicy", "latest") != kafka.get("properties", {}).get("auto.offset.reset", "earliest"):
                problem("KEDA's offsetResetPolicy differs from the workers' auto.offset.reset (earliest unless set)")
            if "authenticationRef" in trigger and ("TriggerAuthentication", trigger["authenticationRef"]["name"]) not in objects:
                problem(f"TriggerAuthentication {trigger['authenticationRef']['name']} is not in the render")
    for auth in by_kind("TriggerAuthentication"):
        for ref in auth["spec"].get("secretTargetRef", []):
            if secret_value(objects, ref["name"], ref["key"]) is None:
                problem(f"TriggerAuthentication {auth['metadata']['name']} reads key {ref['key']} of Secret {ref['name']}, which is not in the render")
    ok("overlay: volumes, Secrets and keys, selectors, probes, ports, grace period and the KEDA trigger fit together", start)
    return {"config": config_text, "environment": environment, "mounted": mounted, "mappings": config.get("mappings", [])}


# 5. Alert rules


@functools.cache
def exported_metrics() -> frozenset[str]:
    names = set()
    for source in (ROOT / "Sources").rglob("*.swift"):
        names |= set(re.findall(r'"(pushbridge_[a-z_]+)"', source.read_text()))
    return frozenset(names)


def unexported_metrics(expr: str) -> list[str]:
    """The pushbridge_* series `expr` reads that the code does not export (histogram suffixes allowed)."""
    exported = exported_metrics()
    return sorted(name for name in set(re.findall(r"\bpushbridge_[a-z_]+", expr))
                  if name not in exported and re.sub(r"_(bucket|count|sum)$", "", name) not in exported)


def promtool_check_rules(groups: list[dict]) -> subprocess.CompletedProcess:
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        yaml.safe_dump({"groups": groups}, f)
    return run(["promtool", "check", "rules", f.name])


def check_rules(objects: list[dict]) -> None:
    rules = [o for o in objects if o["kind"] == "PrometheusRule"]
    if not rules:
        problem("no PrometheusRule in the render")
        return
    start = len(problems)
    alerts = 0
    for rule in rules:
        result = promtool_check_rules(rule["spec"]["groups"])
        if result.returncode != 0:
            problem(f"promtool: PrometheusRule {rule['metadata']['name']}:\n{result.stdout}{result.stderr}")
        for group in rule["spec"]["groups"]:
            for r in group["rules"]:
                alerts += "alert" in r
                for name in unexported_metrics(r["expr"]):
                    problem(f"alert {r.get('alert')} reads {name}, which pushbridge does not export")
                anchor = r.get("annotations", {}).get("runbook", "").partition("#")[2]
                if anchor and f"### {r.get('alert')}" not in (ROOT / "docs" / "operations.md").read_text():
                    problem(f"alert {r.get('alert')} has no '### {r.get('alert')}' section in docs/operations.md")
    ok(f"{alerts} alert rules pass promtool, read only exported metrics, and each has a runbook section", start)


def check_dashboard() -> None:
    """The Grafana dashboard: its queries parse (promtool, as recording rules) and read only
    exported metrics."""
    start = len(problems)
    path = DEPLOY / "grafana" / "pushbridge.json"
    try:
        dashboard = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        problem(f"{path.relative_to(ROOT)}: {e}")
        return
    exprs = [t["expr"] for panel in dashboard.get("panels", []) for t in panel.get("targets", [])]
    result = promtool_check_rules([{"name": "dashboard", "rules": [
        {"record": f"dashboard:query{i}", "expr": e.replace("$__rate_interval", "5m")} for i, e in enumerate(exprs)]}])
    if result.returncode != 0:
        problem(f"promtool: a query of {path.relative_to(ROOT)} does not parse:\n{result.stdout}{result.stderr}")
    for e in exprs:
        for name in unexported_metrics(e):
            problem(f"{path.relative_to(ROOT)} reads {name}, which pushbridge does not export")
    ok(f"Grafana dashboard: {len(exprs)} queries parse and read only exported metrics", start)


# 6. The worker loads what the cluster gives it


def check_with_pushbridge(binary: str, pieces: dict) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "pushbridge.yaml"
        config.write_text(pieces["config"])
        mapping_dirs = []
        for path in pieces["mappings"]:
            directory = Path(tmp) / "mappings" / str(len(mapping_dirs))
            directory.mkdir(parents=True)
            for name, text in pieces["mounted"][path][1].get("data", {}).items():
                (directory / name).write_text(text)
            mapping_dirs.append(str(directory))
        environment = {"PATH": "/usr/bin:/bin", **pieces["environment"], "PUSHBRIDGE_MAPPINGS": ",".join(mapping_dirs)}
        result = run([binary, "run", "--config", str(config), "--print-config"], env=environment)
        if result.returncode != 0:
            problem(f"pushbridge refuses the rendered config with the pod's environment:\n{result.stderr}")
            return
        printed = yaml.safe_load(result.stdout)
        known = set()

        def walk(node: dict, prefix: str) -> None:
            for key, value in node.items():
                path = f"{prefix}.{key}" if prefix else key
                if isinstance(value, dict) and path != "kafka.properties":
                    walk(value, path)
                else:
                    known.add("PUSHBRIDGE_" + path.upper().replace(".", "_"))

        walk(printed, "")
        for name, value in pieces["environment"].items():
            if name.startswith("PUSHBRIDGE_KAFKA_PROPERTIES_"):
                prop = name[len("PUSHBRIDGE_KAFKA_PROPERTIES_"):].lower().replace("_", ".")
                if prop not in printed["kafka"]["properties"]:
                    problem(f"env {name} did not set the Kafka property {prop}")
                if value in result.stdout and ("password" in prop or "secret" in prop):
                    problem(f"--print-config shows the value of {prop}")
            elif name.startswith("PUSHBRIDGE_") and name not in known:
                problem(f"env {name} is not a config key pushbridge reads")
        if printed["kafka"].get("instance_id") != pieces["environment"].get("PUSHBRIDGE_KAFKA_INSTANCE_ID"):
            problem("the pod name does not reach kafka.instance_id")
        result = run([binary, "validate", *mapping_dirs])
        if result.returncode != 0:
            problem(f"pushbridge validate on the rendered mappings:\n{result.stdout}{result.stderr}")
            return
        ok(f"pushbridge loads the rendered config with the pod's environment; mappings: {result.stdout.strip()}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pushbridge", required=True, help="the built pushbridge binary")
    args = parser.parse_args()

    lint_dockerfile()
    base = render(KUBERNETES / "base")
    validate(base, "base")
    overlay = render(KUBERNETES / "overlays" / "example")
    validate(overlay, "overlays/example")
    if overlay:
        pieces = cross_check(index(overlay))
        check_rules(overlay)
        check_dashboard()
        if pieces:
            check_with_pushbridge(args.pushbridge, pieces)
    if problems:
        print(f"check-deploy: {len(problems)} problem(s)")
        return 1
    print("check-deploy: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
