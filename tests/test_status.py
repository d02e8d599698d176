"""/status and /status/ready, and the installation check behind them and behind start-up."""

from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path

import pytest

from hbserver import cli
from hbserver.adapters.params import SCHEMAS
from hbserver.appkeys import HEALTH
from hbserver.bidders import DEFINITIONS
from hbserver.installation import REINSTALL, STATIC_FILES, installation_problems

STATIC = resources.files("hbserver") / "static"


@pytest.mark.parametrize(
    ("status_response", "problems", "draining", "live", "ready"),
    [
        ("", [], False, (204, ""), (204, "")),
        ("ok", [], False, (200, "ok"), (200, "ok")),
        ("ok", [], True, (200, "ok"), (503, "draining: shutting down")),
        ("", ["no bidder definitions found"], False,
         (503, "unhealthy: no bidder definitions found"), (503, "unhealthy: no bidder definitions found")),
        ("", ["no bidder definitions found"], True,
         (503, "unhealthy: no bidder definitions found"), (503, "draining: shutting down")),
    ],
    ids=["healthy-204", "healthy-text", "draining", "incomplete", "incomplete-draining"],
)
async def test_liveness_and_readiness(make_client, status_response, problems, draining, live, ready):
    client = await make_client(status_response=status_response)
    health = client.app[HEALTH]
    health.problems, health.draining = problems, draining
    for path, (status, text) in (("/status", live), ("/status/ready", ready)):
        response = await client.get(path)
        assert (response.status, await response.text()) == (status, text), path


async def test_a_whole_installation_is_healthy(make_client):
    client = await make_client()
    assert client.app[HEALTH].problems == []
    assert installation_problems() == []


def copy_package_data(tmp_path: Path) -> tuple[Path, Path, Path]:
    definitions, schemas, static = tmp_path / "definitions", tmp_path / "schemas", tmp_path / "static"
    shutil.copytree(DEFINITIONS, definitions)
    shutil.copytree(SCHEMAS, schemas)
    static.mkdir()
    for name in STATIC_FILES:
        (static / name).write_bytes((STATIC / name).read_bytes())
    return definitions, schemas, static


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        (lambda d, s, st: None, []),
        (lambda d, s, st: [p.unlink() for p in d.glob("*.yaml")],
         ["no bidder definitions found in {d}: " + REINSTALL]),
        (lambda d, s, st: (s / "appnexus.json").unlink(),
         ["no parameter schema for bidder 'appnexus' in {s}: " + REINSTALL]),
        (lambda d, s, st: (d / "nosuchbidder.yaml").write_text("code: nosuchbidder\n"),
         ["bidder definition 'nosuchbidder' has no adapter module hbserver.adapters.nosuchbidder nor recipe "
          "recipes/nosuchbidder.yaml: " + REINSTALL,
          "no parameter schema for bidder 'nosuchbidder' in {s}: " + REINSTALL]),
        (lambda d, s, st: (st / "load-cookie.html").unlink(),
         ["helper page static/load-cookie.html is missing from the package: " + REINSTALL]),
    ],
    ids=["whole", "no-definitions", "no-schema", "no-module", "no-static-page"],
)
def test_installation_problems(tmp_path, damage, expected):
    definitions, schemas, static = copy_package_data(tmp_path)
    damage(definitions, schemas, static)
    found = installation_problems(definitions, schemas, static)
    assert found == [line.format(d=definitions, s=schemas) for line in expected]


def test_generic_needs_no_schema(tmp_path):
    definitions, schemas, static = copy_package_data(tmp_path)
    assert not (schemas / "generic.json").exists() and (definitions / "generic.yaml").exists()
    assert installation_problems(definitions, schemas, static) == []


def test_start_up_refuses_an_incomplete_installation(monkeypatch, capsys, tmp_path):
    problem = f"no bidder definitions found in {tmp_path}: {REINSTALL}"
    monkeypatch.setattr(cli, "installation_problems", lambda: [problem])
    assert cli.main(["--check-config"]) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", problem + "\n")
