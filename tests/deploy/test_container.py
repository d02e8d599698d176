"""The container, checked without Docker: the Dockerfile linted (hadolint, checkov) and read for
its promises, and its layout rebuilt and run as its unprivileged user with a read-only root."""

from __future__ import annotations

import json
import re
import time

from tests.deploy.bidder import auction_request
from tests.deploy.image import DOCKERFILE, instructions, run_stage
from tests.deploy.tools import ROOT, run, tool
from tests.e2e.helpers import ServerProcess, free_port, get


def test_hadolint_is_clean():
    done = run(tool("hadolint"), "--no-color", DOCKERFILE)
    assert done.returncode == 0, done.stdout + done.stderr


def test_checkov_is_clean():
    # --skip-download: checkov fetches guidelines from its vendor otherwise; tests stay on loopback.
    done = run(tool("checkov"), "-f", DOCKERFILE, "--framework", "dockerfile", "--skip-download", "--quiet",
               "-o", "json")
    report = json.loads(done.stdout)
    summary = report["summary"]
    failed = [(c["check_id"], c["check_name"]) for c in report["results"]["failed_checks"]]
    assert summary["passed"] > 20 and failed == [], failed


def test_dockerfile_promises():
    steps = instructions(DOCKERFILE.read_text())
    bases = [args.split()[0] for word, args in steps if word == "FROM"]
    assert bases and all(re.fullmatch(r"python:3\.11\.\d+-slim-\w+", base) for base in bases), bases
    text = [f"{word} {args}" for word, args in steps]
    lock_install = next(i for i, line in enumerate(text) if "--require-hashes" in line and "runtime.txt" in line)
    source_copy = next(i for i, line in enumerate(text) if line.startswith("COPY hbserver"))
    assert lock_install < source_copy  # dependencies are a layer of their own, before the code
    stage = run_stage()
    assert stage.user.split(":")[0] not in ("", "0", "root")
    assert stage.healthcheck == ["python", "-m", "hbserver.healthcheck"]  # asks the configured port
    assert set(stage.volumes) == {"/tmp", "/var/lib/hbserver"}
    assert stage.env["PROMETHEUS_MULTIPROC_DIR"].startswith("/tmp/")
    assert stage.entrypoint == ["hbserver"] and "8000" in stage.expose


def test_compose_uses_the_image_read_only_with_its_volumes():
    import yaml

    compose = yaml.safe_load((ROOT / "deploy" / "docker-compose.yml").read_text())
    service = compose["services"]["hbserver"]
    assert service["read_only"] is True
    mounts = {entry.split(":")[1] for entry in service["volumes"]} | {t.split(":")[0] for t in service["tmpfs"]}
    assert mounts == set(run_stage().volumes)
    analytics = service["environment"]["HBS_ANALYTICS__FILE__FILENAME"]
    assert analytics.startswith("/var/lib/hbserver/")
    for name, other in compose["services"].items():
        assert not other.get("image", "").endswith(":latest"), name


def test_image_layout_serves_an_auction_as_its_user_with_a_read_only_root(image, appnexus, tmp_path):
    port = free_port()
    env = {
        "HBS_EXTERNAL_URL": f"http://127.0.0.1:{port}",
        "HBS_ADAPTERS__APPNEXUS__ENDPOINT": appnexus.url,
        "HBS_ANALYTICS__FILE__FILENAME": "/var/lib/hbserver/analytics.jsonl",
        "HBS_WORKERS": "2",
    }
    # As `docker run --read-only hbserver --host 127.0.0.1 --port N`; first, which paths take a file.
    done = run(*image.command([], env, shell=PROBE))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["/tmp:yes", "/var/lib/hbserver:yes", "/srv/hbserver:no", "/opt/hbserver:no",
                                   "/etc:no", "/:no", f"uid:{image.stage.user.split(':')[0]}", "root-mount:ro"]
    command = image.command(["--host", "127.0.0.1", "--port", str(port)], env)
    server = ServerProcess(command, port, tmp_path)
    try:
        server.wait_ready()
        from tests.deploy.test_packaging import post

        for _ in range(4):  # two workers: the kernel spreads connections, each must serve
            status, answer = post(f"{server.base}/openrtb2/auction", auction_request())
            assert status == 200 and answer["seatbid"][0]["bid"][0]["price"] == 1.5, answer
        time.sleep(1.5)  # each worker applies its counts to the shared files every second
        status, metrics = get(f"{server.base}/metrics")
        assert status == 200
        assert re.search(rb'hbserver_adapter_bids\{adapter="appnexus",delivery="adm"\} 4\.0', metrics), metrics[:2000]
        assert server.terminate() == 0, server.output()
        assert "Traceback" not in server.output() and "Permission denied" not in server.output()
    finally:
        server.stop()
    analytics = image.root / "volumes" / "var-lib-hbserver" / "analytics.jsonl"
    records = [json.loads(line) for line in analytics.read_text().splitlines()]
    assert [r["event"] for r in records] == ["auction"] * 4  # flushed on SIGTERM, in the writable volume


# Run as the image's user in the server's mount namespace: which paths take a file.
PROBE = """for d in /tmp /var/lib/hbserver /srv/hbserver /opt/hbserver /etc /; do
  if touch "$d/.probe" 2>/dev/null; then rm -f "$d/.probe"; echo "$d:yes"; else echo "$d:no"; fi
done; echo "uid:$(id -u)"; awk '$5 == "/" {split($6, o, ","); print "root-mount:" o[1]}' /proc/self/mountinfo
"""
