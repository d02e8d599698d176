"""The container image's layout, rebuilt without Docker (no Docker engine runs on these machines).

What the Dockerfile does, done here the same way: the hbserver wheel built with
``pip wheel --no-deps`` from a clean copy of the sources, a venv at ``/opt/hbserver`` made from the
hashed runtime lock (``--require-hashes --no-deps``) plus that wheel, the sample stored data in
``/srv/hbserver``. The run stage's ENV, USER, WORKDIR, VOLUMEs and ENTRYPOINT are read from the
Dockerfile itself. A process then runs in a private mount namespace where the image's paths are
bind-mounted at their real places, the root filesystem is read-only, and only the Dockerfile's
VOLUMEs are writable, as the image's user (``setpriv``), like ``docker run --read-only``.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from tests.deploy.tools import ROOT

DOCKERFILE = ROOT / "Dockerfile"
RUNTIME_LOCK = ROOT / "requirements" / "runtime.txt"
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# The image's interpreter stands in for python:3.11-slim's: Debian's, which an unprivileged user
# can run (pyenv's lives under /root).
SYSTEM_PYTHON = Path("/usr/bin/python3.11")
VENV = "/opt/hbserver"


@dataclass
class Stage:
    """The run stage of a Dockerfile: what a container of it starts with."""

    env: dict[str, str] = field(default_factory=dict)
    user: str = "root"
    workdir: str = "/"
    volumes: list[str] = field(default_factory=list)
    entrypoint: list[str] = field(default_factory=list)
    cmd: list[str] = field(default_factory=list)
    expose: list[str] = field(default_factory=list)
    healthcheck: list[str] = field(default_factory=list)


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, comments dropped."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = pending + line, ""
        if line.strip():
            word, _, rest = line.strip().partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def _expand(value: str, env: dict[str, str]) -> str:
    for name, current in sorted(env.items(), key=lambda item: -len(item[0])):
        value = value.replace("${" + name + "}", current).replace("$" + name, current)
    return value


def _env_pairs(args: str, env: dict[str, str], build_args: dict[str, str] | None = None) -> None:
    for token in shlex.split(args):
        name, _, value = token.partition("=")
        env[name] = _expand(value, {"PATH": DEFAULT_PATH, **(build_args or {}), **env})


def run_stage(dockerfile: Path = DOCKERFILE) -> Stage:
    """The last stage of ``dockerfile``."""
    stage = Stage()
    build_args: dict[str, str] = {}  # ARG defaults (no --build-arg here), visible to later ENVs
    for word, args in instructions(dockerfile.read_text()):
        if word == "FROM":
            stage = Stage()
            build_args = {}
        elif word == "ARG":
            _env_pairs(args, build_args)
        elif word == "ENV":
            _env_pairs(args, stage.env, build_args)
        elif word == "USER":
            stage.user = args
        elif word == "WORKDIR":
            stage.workdir = args
        elif word == "VOLUME":
            stage.volumes = json.loads(args) if args.startswith("[") else args.split()
        elif word in ("ENTRYPOINT", "CMD"):
            setattr(stage, word.lower(), json.loads(args))
        elif word == "EXPOSE":
            stage.expose = args.split()
        elif word == "HEALTHCHECK":
            stage.healthcheck = json.loads(args[args.index("CMD") + 3 :].strip())
    return stage


def source_files() -> list[str]:
    """What the Dockerfile copies into its build stage, as git sees it (no caches, no build/)."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "--", "pyproject.toml", "README.md", "hbserver"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split("\n")
    return [name for name in listed if name and (ROOT / name).is_file()]


def build_wheel(workdir: Path) -> Path:
    """``pip wheel --no-deps .`` over a clean copy of the sources; the wheel's path."""
    source = workdir / "src"
    for name in source_files():
        target = source / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target)
    dist = workdir / "dist"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(dist), str(source)],
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    [wheel] = dist.glob("hbserver-*.whl")
    return wheel


def _namespace(script: str) -> list[str]:
    return ["unshare", "--mount", "--propagation", "private", "sh", "-euc", script]


class ImageLayout:
    """An image rebuilt under a scratch root: ``<root>/opt/hbserver``, ``<root>/srv/hbserver``."""

    def __init__(self, wheel: Path, stage: Stage) -> None:
        self.stage = stage
        self.root = Path(tempfile.mkdtemp(prefix="hbserver-image-"))
        self.root.chmod(0o755)  # the image's user must reach the files, as in an image
        self.venv = self.root / VENV.lstrip("/")
        self.workdir = self.root / stage.workdir.lstrip("/")
        for path in (self.venv, self.workdir):
            path.mkdir(parents=True)
        # The build stage: a venv at /opt/hbserver from the lock, then the wheel alone.
        script = "\n".join([
            *self._binds({VENV: self.venv}, []),
            f"{SYSTEM_PYTHON} -m venv {VENV}",
            f"{VENV}/bin/pip install --quiet --disable-pip-version-check --require-hashes --no-deps "
            f"-r {shlex.quote(str(RUNTIME_LOCK))}",
            f"{VENV}/bin/pip install --quiet --disable-pip-version-check --no-deps {shlex.quote(str(wheel))}",
        ])
        done = subprocess.run(_namespace(script), capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        shutil.copytree(ROOT / "stored_requests", self.workdir / "stored_requests")

    @property
    def python(self) -> Path:
        """The venv's interpreter, runnable from where it lies (as root)."""
        return self.venv / "bin" / "python"

    @staticmethod
    def _binds(mounts: dict[str, Path], made: list[str]) -> list[str]:
        """Shell lines that put each source at its image path. A missing mount point is made on a
        tmpfs over its parent (hiding the host's directory there); such parents go into ``made``."""
        lines = []
        for target, source in mounts.items():
            parent = os.path.dirname(target)
            if not os.path.exists(target) and parent not in made:
                lines.append(f"mount -t tmpfs -o mode=0755 tmpfs {parent}")
                made.append(parent)
            lines += [f"mkdir -p {target}", f"mount --bind {shlex.quote(str(source))} {target}"]
        return lines

    def command(self, args: list[str], env: dict[str, str], shell: str = "") -> list[str]:
        """``docker run --read-only <image> <args>`` with ``env``: the command line that does it
        (with ``shell``: that shell script, as the image's user, instead of the entrypoint).

        Each VOLUME is a fresh directory the image's user owns (``/tmp`` a tmpfs, mounted last
        because this layout itself lies under /tmp); everything else is read-only.
        """
        uid, _, gid = self.stage.user.partition(":")
        gid = gid or uid
        volumes = {}
        for volume in self.stage.volumes:
            if volume == "/tmp":
                continue
            path = self.root / "volumes" / volume.strip("/").replace("/", "-")
            path.mkdir(parents=True, exist_ok=True)
            os.chown(path, int(uid), int(gid))
            volumes[volume] = path
        made: list[str] = []
        lines = self._binds({VENV: self.venv, self.stage.workdir: self.workdir}, made)
        lines += self._binds(volumes, made)
        if "/tmp" in self.stage.volumes:
            lines.append("mount -t tmpfs -o mode=1777,size=64m tmpfs /tmp")
        # Read-only: the root, the tmpfs stand-ins for the image's own directories, and its files.
        lines += [f"mount -o remount,bind,ro {target}" for target in (VENV, self.stage.workdir)]
        lines += [f"mount -o remount,ro {parent}" for parent in made]
        lines.append("mount -o remount,bind,ro /")
        environment = {**self.stage.env, **env}
        lines.append(f"cd {self.stage.workdir}")
        program = ["sh", "-c", shell] if shell else [*self.stage.entrypoint, *args]
        lines.append(
            f"exec setpriv --reuid={uid} --regid={gid} --clear-groups env -i "
            + " ".join(shlex.quote(f"{k}={v}") for k, v in environment.items())
            + " "
            + " ".join(shlex.quote(a) for a in program)
        )
        return _namespace("\n".join(lines))

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

