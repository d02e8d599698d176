"""The deployment linters and validators (`make tools` installs them into .cache/tools from
requirements/tools.txt): skipped with a reason when absent, a failure under CI=true."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from tests.services import require

ROOT = Path(__file__).resolve().parents[2]
TOOLS_BIN = ROOT / ".cache" / "tools" / "bin"
DEPLOY = ROOT / "deploy"


def tool(name: str) -> Path:
    """The path of a tool from .cache/tools (hadolint, checkov, kubernetes-validate)."""
    path = TOOLS_BIN / name
    require(path.exists(), f"{name} is not installed in .cache/tools", "`make tools` installs it")
    return path


def kubectl() -> str:
    """kubectl, whose built-in kustomize renders deploy/kubernetes (preinstalled on these machines)."""
    path = shutil.which("kubectl")
    require(path is not None, "kubectl (for `kubectl kustomize`) is not on PATH", "install kubectl")
    assert path is not None
    return path


def run(*args: str | Path, cwd: Path = ROOT, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, timeout=timeout)
