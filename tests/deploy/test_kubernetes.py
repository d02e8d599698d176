"""deploy/kubernetes: the kustomize base and the example overlay render, pass the Kubernetes schemas
(strict: unknown fields refused) and checkov, keep the properties hbserver relies on (probes, drain
timing, read-only root with emptyDirs where it writes, no service links, secrets from secretKeyRef,
selectors that match), and their hbserver.yaml passes ``hbserver --check-config``."""

from __future__ import annotations

import json
import os
import posixpath
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.deploy.tools import DEPLOY, ROOT, kubectl, run, tool

KUBERNETES = DEPLOY / "kubernetes"
KUSTOMIZATIONS = {"base": KUBERNETES / "base", "overlay": KUBERNETES / "overlays" / "example"}
VARIANTS = tuple(KUSTOMIZATIONS)

# The Kubernetes versions whose schemas (shipped offline in kubernetes-validate) the manifests must
# pass: kubectl's here (v1.32) and the newest the installed kubernetes-validate knows.
K8S_VERSIONS = ("1.32.0", "1.37.0")

SECRET_NAME = "hbserver-secrets"
# Environment variable -> key in the Secret, and the fake value the --check-config run gives it.
SECRET_ENV = {
    "HBS_STORED_REQUESTS__DATABASE__DSN": ("postgres-dsn", "postgresql://hbserver@postgres:5432/hbserver"),
    "HBS_CACHE__REDIS__URL": ("redis-url", "redis://redis:6379/0"),
}
CONFIG_PATH = "/etc/hbserver/hbserver.yaml"
IMAGE = {"base": "hbserver:0.1.0", "overlay": "ghcr.io/example/hbserver:0.1.0"}
PROMETHEUS_MULTIPROC_DIR = "/tmp/hbserver-metrics"  # set by the image

# Every finding checkov may report as skipped, with a word its reason (a checkov.io/skipN annotation
# in the manifest) must contain. Anything else checkov reports must pass.
CHECKOV_SKIPS = {
    "CKV_K8S_43": "digest",  # image by digest: the operator's overlay pins it
    "CKV_K8S_35": "secretKeyRef",  # secrets as env: hbserver reads them from config or HBS_ env only
}


@dataclass(frozen=True)
class Rendered:
    """The output of ``kubectl kustomize`` for one kustomization."""

    name: str
    path: Path
    docs: list[dict[str, Any]]

    def all(self, kind: str) -> list[dict[str, Any]]:
        return [d for d in self.docs if d["kind"] == kind]

    def one(self, kind: str) -> dict[str, Any]:
        found = self.all(kind)
        assert len(found) == 1, f"{self.name}: expected one {kind}, found {len(found)}"
        return found[0]

    @property
    def pod(self) -> dict[str, Any]:
        return self.one("Deployment")["spec"]["template"]

    @property
    def container(self) -> dict[str, Any]:
        containers = self.pod["spec"]["containers"]
        assert [c["name"] for c in containers] == ["hbserver"]
        return containers[0]

    @property
    def config_map(self) -> dict[str, Any]:
        return self.one("ConfigMap")

    @property
    def config(self) -> dict[str, Any]:
        """hbserver.yaml as the ConfigMap carries it (after the overlay's replacement)."""
        return yaml.safe_load(self.config_map["data"]["hbserver.yaml"])


def dig(obj: Any, path: tuple[str | int, ...]) -> Any:
    for key in path:
        obj = obj[key]
    return obj


def cpus(quantity: str | int | float) -> float:
    text = str(quantity)
    return float(text[:-1]) / 1000 if text.endswith("m") else float(text)


def matches(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Rendered]:
    out = tmp_path_factory.mktemp("kubernetes")
    result = {}
    for name, directory in KUSTOMIZATIONS.items():
        proc = run(kubectl(), "kustomize", directory)
        assert proc.returncode == 0, f"kubectl kustomize {directory} failed:\n{proc.stderr}"
        path = out / f"{name}.yaml"
        path.write_text(proc.stdout)
        docs = [d for d in yaml.safe_load_all(proc.stdout) if d]
        result[name] = Rendered(name, path, docs)
    return result


@pytest.fixture(params=VARIANTS)
def r(request: pytest.FixtureRequest, rendered: dict[str, Rendered]) -> Rendered:
    return rendered[request.param]


@pytest.fixture(scope="module")
def checkov(rendered: dict[str, Rendered], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """checkov's kubernetes report on both rendered kustomizations (one run: it takes seconds)."""
    directory = tmp_path_factory.mktemp("checkov")
    for item in rendered.values():
        (directory / item.path.name).write_text(item.path.read_text())
    proc = run(
        tool("checkov"), "-d", directory, "--framework", "kubernetes", "--compact", "--skip-download",
        "-o", "json", timeout=300,
    )
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"checkov gave no JSON report (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    reports = report if isinstance(report, list) else [report]
    found = [rep for rep in reports if rep.get("check_type") == "kubernetes"]
    assert len(found) == 1, f"no kubernetes report from checkov:\n{proc.stdout[:2000]}\n{proc.stderr}"
    return found[0]


# --- rendering and schemas ------------------------------------------------------------------------

EXPECTED_KINDS = {
    "base": {"ServiceAccount", "ConfigMap", "Service", "Deployment", "PodDisruptionBudget",
             "HorizontalPodAutoscaler", "NetworkPolicy"},
}
EXPECTED_KINDS["overlay"] = EXPECTED_KINDS["base"] | {"Namespace"}
API_VERSIONS = {"HorizontalPodAutoscaler": "autoscaling/v2", "PodDisruptionBudget": "policy/v1",
                "Deployment": "apps/v1", "NetworkPolicy": "networking.k8s.io/v1"}


def test_renders_every_resource_once(r):
    kinds = [d["kind"] for d in r.docs]
    assert sorted(kinds) == sorted(EXPECTED_KINDS[r.name])
    for kind, api_version in API_VERSIONS.items():
        assert r.one(kind)["apiVersion"] == api_version


@pytest.mark.parametrize("version", K8S_VERSIONS)
def test_kubernetes_schemas_strict(rendered, version):
    paths = [item.path for item in rendered.values()]
    proc = run(tool("kubernetes-validate"), "--strict", "-k", version, *paths)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # One "passed" line per document: nothing was left unvalidated (e.g. an unknown kind).
    assert proc.stdout.count(" passed for resource ") == sum(len(item.docs) for item in rendered.values()), proc.stdout


# --- checkov --------------------------------------------------------------------------------------

def test_checkov_finds_nothing_unanswered(checkov):
    results, summary = checkov["results"], checkov["summary"]
    failed = [f"{c['check_id']} {c['check_name']}: {c['resource']} in {c['file_path']}"
              for c in results.get("failed_checks", [])]
    assert failed == [], "checkov failures (fix them or answer them with checkov.io/skipN):\n" + "\n".join(failed)
    assert summary["parsing_errors"] == 0
    # It really examined both renderings: a Deployment check passed in each.
    passed_deployments = {c["file_path"].lstrip("/") for c in results["passed_checks"]
                          if c["resource"].startswith("Deployment.")}
    assert passed_deployments == {f"{name}.yaml" for name in VARIANTS}
    assert summary["passed"] > 50


def test_checkov_skips_are_the_answered_ones(checkov):
    skipped = checkov["results"].get("skipped_checks", [])
    by_file: dict[str, set[str]] = {}
    for check in skipped:
        by_file.setdefault(check["file_path"].lstrip("/"), set()).add(check["check_id"])
        reason = check["check_result"].get("suppress_comment", "")
        assert CHECKOV_SKIPS[check["check_id"]] in reason, (check["check_id"], reason)
        assert len(reason) > 80, f"{check['check_id']}: give the reason, not a label: {reason!r}"
    assert by_file == {f"{name}.yaml": set(CHECKOV_SKIPS) for name in VARIANTS}


# --- the pod --------------------------------------------------------------------------------------

POD_SPEC = [
    (("enableServiceLinks",), False),  # HBS_* service-link variables would refuse the start
    (("automountServiceAccountToken",), False),
    (("serviceAccountName",), "hbserver"),
    (("securityContext", "runAsNonRoot"), True),
    (("securityContext", "runAsUser"), 10001),
    (("securityContext", "runAsGroup"), 10001),
    (("securityContext", "fsGroup"), 10001),
    (("securityContext", "seccompProfile", "type"), "RuntimeDefault"),
]
CONTAINER = [
    (("args",), ["--config", CONFIG_PATH]),
    (("ports",), [{"name": "http", "containerPort": 8000, "protocol": "TCP"}]),
    (("imagePullPolicy",), "Always"),
    (("securityContext", "readOnlyRootFilesystem"), True),
    (("securityContext", "allowPrivilegeEscalation"), False),
    (("securityContext", "privileged"), False),
    (("securityContext", "capabilities", "drop"), ["ALL"]),
    (("livenessProbe", "httpGet"), {"path": "/status", "port": "http"}),
    (("startupProbe", "httpGet"), {"path": "/status", "port": "http"}),
    (("readinessProbe", "httpGet"), {"path": "/status/ready", "port": "http"}),
    (("readinessProbe", "failureThreshold"), 1),  # out of the Service at the first 503 of the drain
]


@pytest.mark.parametrize(("path", "expected"), POD_SPEC, ids=[".".join(p) for p, _ in POD_SPEC])
def test_pod_spec(r, path, expected):
    assert dig(r.pod["spec"], path) == expected


@pytest.mark.parametrize(("path", "expected"), CONTAINER, ids=[".".join(p) for p, _ in CONTAINER])
def test_container(r, path, expected):
    assert dig(r.container, path) == expected


def test_image_is_a_pinned_tag(r):
    assert r.container["image"] == IMAGE[r.name]


@pytest.mark.parametrize("kind", ["requests", "limits"])
@pytest.mark.parametrize("resource", ["cpu", "memory"])
def test_resources(r, kind, resource):
    assert r.container["resources"][kind][resource]


def test_cpu_limit_is_whole_cpus_for_workers_0(r):
    """workers: 0 starts floor(CPU limit) workers: a fractional limit pays for CPU no worker uses."""
    assert r.config["workers"] == 0
    limit = cpus(r.container["resources"]["limits"]["cpu"])
    assert limit >= 1 and limit == int(limit), limit
    assert cpus(r.container["resources"]["requests"]["cpu"]) <= limit


def test_secrets_come_from_secret_key_refs(r):
    env = {e["name"]: e for e in r.container["env"]}
    for name, (key, _) in SECRET_ENV.items():
        assert env[name]["valueFrom"]["secretKeyRef"] == {"name": SECRET_NAME, "key": key}, name
    # and not from the ConfigMap's file
    assert "dsn" not in (r.config["stored_requests"].get("database") or {})
    assert "redis" not in r.config["cache"]


def volume_at(r: Rendered, mount_path: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the volumeMount at ``mount_path``, its volume)."""
    mounts = [m for m in r.container["volumeMounts"] if m["mountPath"] == mount_path]
    assert len(mounts) == 1, f"nothing (or several) mounted at {mount_path}"
    volumes = {v["name"]: v for v in r.pod["spec"]["volumes"]}
    return mounts[0], volumes[mounts[0]["name"]]


def test_writable_paths_are_empty_dirs(r):
    """The root filesystem is read-only: exactly /tmp (in memory) and /var/lib/hbserver are writable."""
    writable = {m["mountPath"] for m in r.container["volumeMounts"] if not m.get("readOnly")}
    assert writable == {"/tmp", "/var/lib/hbserver"}
    _, tmp = volume_at(r, "/tmp")
    assert tmp["emptyDir"]["medium"] == "Memory"
    assert tmp["emptyDir"]["sizeLimit"]  # memory-backed: bounded, counted against the memory limit
    _, data = volume_at(r, "/var/lib/hbserver")
    assert "emptyDir" in data and data["emptyDir"]["sizeLimit"]
    # where hbserver writes: the analytics file and the Prometheus multiprocess directory
    for path in (r.config["analytics"]["file"]["filename"], PROMETHEUS_MULTIPROC_DIR):
        assert any(path.startswith(w.rstrip("/") + "/") for w in writable), path


def test_config_map_mounted_read_only(r):
    mount, volume = volume_at(r, posixpath.dirname(CONFIG_PATH))
    assert mount.get("readOnly") is True
    name = r.config_map["metadata"]["name"]
    assert volume["configMap"]["name"] == name
    assert name.startswith("hbserver-config-")  # the generator's hash suffix: a new config rolls the pods
    assert posixpath.basename(CONFIG_PATH) in r.config_map["data"]


def test_grace_period_covers_drain_and_shutdown(r):
    drain = r.config.get("shutdown_drain_seconds", 0)
    timeout = r.config.get("shutdown_timeout_seconds", 10)
    assert drain > 0, "without a drain the pod stops listening before it leaves the Service"
    assert r.pod["spec"]["terminationGracePeriodSeconds"] > drain + timeout
    # the readiness probe notices the 503 well within the drain
    probe = r.container["readinessProbe"]
    assert probe["periodSeconds"] * probe["failureThreshold"] + probe["timeoutSeconds"] < drain


def test_prometheus_scrape_annotations(r):
    annotations = r.pod["metadata"]["annotations"]
    prometheus = r.config["metrics"]["prometheus"]
    assert prometheus["enabled"] is True
    assert annotations["prometheus.io/scrape"] == "true"
    assert annotations["prometheus.io/port"] == str(r.container["ports"][0]["containerPort"])
    assert annotations["prometheus.io/path"] == prometheus.get("path", "/metrics")


# --- the objects around the pod --------------------------------------------------------------------

SELECTORS = [
    ("Deployment", ("spec", "selector", "matchLabels")),
    ("Service", ("spec", "selector")),
    ("PodDisruptionBudget", ("spec", "selector", "matchLabels")),
    ("NetworkPolicy", ("spec", "podSelector", "matchLabels")),
    ("Deployment", ("spec", "template", "spec", "topologySpreadConstraints", 0, "labelSelector", "matchLabels")),
]


@pytest.mark.parametrize(("kind", "path"), SELECTORS, ids=[f"{k}.{p[-2]}" for k, p in SELECTORS])
def test_selectors_match_the_pods(r, kind, path):
    assert matches(dig(r.one(kind), path), r.pod["metadata"]["labels"])


def test_spread_across_nodes(r):
    keys = {c["topologyKey"] for c in r.pod["spec"]["topologySpreadConstraints"]}
    assert "kubernetes.io/hostname" in keys


def test_service(r):
    spec = r.one("Service")["spec"]
    assert spec["type"] == "ClusterIP"
    assert [(p["port"], p["targetPort"]) for p in spec["ports"]] == [(80, "http")]
    assert "http" in {p["name"] for p in r.container["ports"]}


def test_hpa_scales_the_deployment_on_cpu(r):
    spec = r.one("HorizontalPodAutoscaler")["spec"]
    deployment = r.one("Deployment")
    assert spec["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment",
                                      "name": deployment["metadata"]["name"]}
    assert [(m["type"], m["resource"]["name"], m["resource"]["target"]["type"]) for m in spec["metrics"]] == [
        ("Resource", "cpu", "Utilization")]
    assert 2 <= spec["minReplicas"] <= deployment["spec"]["replicas"] <= spec["maxReplicas"]


def test_pdb_leaves_pods_up(r):
    spec = r.one("PodDisruptionBudget")["spec"]
    assert spec.get("maxUnavailable") == 1 or spec.get("minAvailable")


def test_network_policy_admits_http(r):
    spec = r.one("NetworkPolicy")["spec"]
    assert "Ingress" in spec["policyTypes"]
    ports = {p["port"] for rule in spec["ingress"] for p in rule["ports"]}
    assert ports <= {8000, "http"} and ports


def test_service_account_has_no_token(r):
    account = r.one("ServiceAccount")
    assert account["automountServiceAccountToken"] is False
    assert account["metadata"]["name"] == r.pod["spec"]["serviceAccountName"]


def test_every_resource_is_namespaced(r):
    namespaces = {d["metadata"].get("namespace") for d in r.docs if d["kind"] != "Namespace"}
    assert len(namespaces) == 1 and None not in namespaces and "default" not in namespaces, namespaces
    if r.name == "overlay":
        assert namespaces == {r.one("Namespace")["metadata"]["name"]}


CONFIG = [
    (("host",), "0.0.0.0"),
    (("port",), 8000),
    (("workers",), 0),
    (("cache", "store"), "redis"),
    (("stored_requests", "filesystem", "enabled"), False),
    (("analytics", "file", "filename"), "/var/lib/hbserver/analytics.jsonl"),
    (("metrics", "prometheus", "enabled"), True),
]


@pytest.mark.parametrize(("path", "expected"), CONFIG, ids=[".".join(p) for p, _ in CONFIG])
def test_config_file(r, path, expected):
    assert dig(r.config, path) == expected


def test_overlay_changes(rendered):
    base, overlay = rendered["base"], rendered["overlay"]
    assert overlay.config["external_url"].startswith("https://")
    assert overlay.config["external_url"] != base.config["external_url"]
    assert overlay.config_map["metadata"]["name"] != base.config_map["metadata"]["name"]
    assert overlay.one("Deployment")["spec"]["replicas"] != base.one("Deployment")["spec"]["replicas"]
    hpa = ("minReplicas", "maxReplicas")
    assert [overlay.one("HorizontalPodAutoscaler")["spec"][k] for k in hpa] != [
        base.one("HorizontalPodAutoscaler")["spec"][k] for k in hpa]


# --- hbserver's own validation ----------------------------------------------------------------------

def hbserver_command() -> list[str]:
    script = Path(sys.executable).with_name("hbserver")  # .venv/bin/hbserver, the image's ENTRYPOINT
    return [str(script)] if script.exists() else [sys.executable, "-m", "hbserver"]


def test_check_config_accepts_the_config_map(r, tmp_path):
    """hbserver --check-config on the ConfigMap's hbserver.yaml with the environment the pod gets."""
    config_file = tmp_path / "hbserver.yaml"
    config_file.write_text(r.config_map["data"]["hbserver.yaml"])
    env = {k: v for k, v in os.environ.items() if not k.startswith("HBS_")}
    for var in r.container["env"]:
        if "value" in var:
            env[var["name"]] = var["value"]
        else:
            env[var["name"]] = SECRET_ENV[var["name"]][1]
    # --check-config also requires the analytics file's directory to exist and be writable. In the pod
    # that is the emptyDir at /var/lib/hbserver (test_writable_paths_are_empty_dirs); here it does not
    # exist, so the file goes to a tmp directory through the environment, which beats the file.
    analytics = tmp_path / "analytics" / "analytics.jsonl"
    analytics.parent.mkdir()
    env["HBS_ANALYTICS__FILE__FILENAME"] = str(analytics)
    proc = subprocess.run(
        [*hbserver_command(), "--check-config", "--config", str(config_file)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    effective = yaml.safe_load(proc.stdout)
    assert effective["stored_requests"]["database"]["dsn"] == SECRET_ENV["HBS_STORED_REQUESTS__DATABASE__DSN"][1]
    assert effective["cache"]["redis"]["url"] == SECRET_ENV["HBS_CACHE__REDIS__URL"][1]
    assert effective["analytics"]["file"]["filename"] == str(analytics)
    assert effective["external_url"] == r.config["external_url"]
    assert effective["port"] == r.container["ports"][0]["containerPort"]


def test_rendered_paths_are_repository_files():
    """The kustomizations reference only files in this repository (no remote bases)."""
    for directory in KUSTOMIZATIONS.values():
        kustomization = yaml.safe_load((directory / "kustomization.yaml").read_text())
        for ref in kustomization.get("resources", []):
            assert (directory / ref).resolve().is_relative_to(ROOT), ref
            assert (directory / ref).exists(), ref
