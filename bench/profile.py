"""Where a scenario's server CPU goes, by stage: ``python -m bench.profile SCENARIO [...]``.

``make profile`` runs it for ``amp`` and ``auction`` (PROFILE_SCENARIOS). The scenario's server starts
as in ``make bench`` (one worker pinned to the server CPU, its mock bidders and wrk on the other CPU);
after a warm-up, wrk loads it while py-spy (``make tools`` installs it) samples the server's Python
stacks without pausing it. Every sample is attributed to one stage (:data:`STAGES`, first match
from the innermost frame outwards), and the table of stages is printed and written as Markdown.

GC is measured apart: the server is started with a ``sitecustomize`` that times every collection
through ``gc.callbacks`` and writes the total when the server stops, since py-spy shows a collection
only as whatever frame allocated when it began.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench import procs
from bench.machine import detect_pinning, process_cpu_seconds
from bench.run import serving
from bench.scenarios import BENCH_DIR, SCENARIOS, Scenario
from bench.wrk import WrkCommand, run_wrk

PY_SPY_CANDIDATES = (BENCH_DIR.parent / ".cache" / "tools" / "bin" / "py-spy",)

# (stage, path fragments of the frame's file, function names or None for any). A sample goes to the
# first stage any of its frames matches, looking from the innermost frame outwards; frames of the
# standard library's asyncio and of the interpreter's start-up match nothing, so a sample with no
# hbserver or aiohttp frame is the event loop's.
STAGES: tuple[tuple[str, tuple[str, ...], frozenset[str] | None], ...] = (
    ("copies (deepcopy, merge)", ("/copy.py", "auction/common/mergepatch.py"), None),
    ("metrics / analytics", ("hbserver/metrics/", "hbserver/analytics/", "auction/auction_metrics.py",
                             "prometheus_client/"), None),
    ("bidder client (outbound HTTP)", ("hbserver/web/bidclient.py", "hbserver/web/connection.py",
                                        "hbserver/web/client.py"), None),
    ("adapters (bidder requests and bids)", ("hbserver/adapters/",), None),
    ("cache writes", ("hbserver/stores/cache/", "auction/response/cache_options.py"), None),
    ("stored data", ("hbserver/stores/stored/", "auction/request/stored.py", "hbserver/stores/lru.py"), None),
    ("validation (types, rules, native)", ("auction/request/validate", "auction/request/ortb_types.py",
                                           "auction/request/native.py", "auction/request/interstitial.py",
                                           "auction/common/iso4217.py", "floors/validate.py",
                                           "adapters/params.py"), None),
    ("privacy (GDPR/TCF, CCPA, GPP, activities)", ("hbserver/privacy/", "auction/exchange/privacy.py"), None),
    ("floors / currency", ("hbserver/floors/", "auction/bids/currency"), None),
    ("targeting / price buckets", ("auction/response/targeting.py", "auction/response/pricegranularity.py",
                                   "auction/response/adservertargeting.py"), None),
    ("bids (adjust, multibid, winners, events)", ("auction/bids/", "auction/response/eventurls.py"), None),
    ("split / first-party data", ("auction/exchange/split.py", "auction/exchange/fpd.py",
                                  "auction/request/tids.py"), None),
    ("AMP request build", ("auction/request/amp.py",), None),
    ("hooks and modules", ("hbserver/hooks/", "hbserver/modules/", "auction/hookpoints.py"), None),
    ("fan-out glue (exchange, core)", ("auction/exchange/fanout.py", "auction/core.py"), None),
    ("response build", ("endpoints/amp.py", "endpoints/auction.py", "auction/request/ortb.py"), None),
    ("JSON (orjson, body read)", ("hbserver/web/body.py",), None),
    ("inbound HTTP (aiohttp, handlers' wrapper)", ("aiohttp/", "hbserver/web/", "multidict/", "yarl/"), None),
    ("other hbserver", ("hbserver/",), None),
)
EVENT_LOOP = "event loop (asyncio, uvloop, idle glue)"

GC_SITECUSTOMIZE = '''\
import atexit, gc, os, time
_spent = [[0.0, 0] for _ in range(3)]  # per generation: CPU seconds, collections
_began = [0.0]
def _timer(phase, info):
    if phase == "start":
        _began[0] = time.thread_time()
    else:
        slot = _spent[info["generation"]]
        slot[0] += time.thread_time() - _began[0]
        slot[1] += 1
gc.callbacks.append(_timer)
def _write():
    with open(os.environ["BENCH_GC_FILE"] + "." + str(os.getpid()), "w") as out:
        out.write(" ".join(f"{spent:.6f} {count}" for spent, count in _spent) + "\\n")
atexit.register(_write)
'''


@dataclass(frozen=True)
class Profile:
    """The stage table of one run."""

    scenario: str
    samples: int
    by_stage: dict[str, int]
    top_functions: list[tuple[str, int]]
    requests: int
    server_cpu_s: float | None
    gc_cpu_s: float | None
    gc_collections: int | None
    gc_generations: tuple[tuple[float, int], ...] = ()  # (CPU seconds, collections) of generations 0, 1, 2

    def cpu_us_per_request(self) -> float | None:
        if self.server_cpu_s is None or not self.requests:
            return None
        return self.server_cpu_s * 1e6 / self.requests


def classify(frames: Sequence[str]) -> str:
    """The stage of one sample; ``frames`` outermost first, as py-spy's raw format lists them."""
    for frame in reversed(frames):
        function, _, location = frame.partition(" (")
        for stage, fragments, functions in STAGES:
            if any(fragment in location for fragment in fragments) and (
                functions is None or function in functions
            ):
                return stage
    return EVENT_LOOP


def parse_collapsed(lines: Iterable[str]) -> list[tuple[list[str], int]]:
    """py-spy's ``--format raw`` (collapsed stacks): ``frame;frame;... COUNT`` per line."""
    stacks = []
    for line in lines:
        line = line.rstrip("\n")
        if not line:
            continue
        stack, _, count = line.rpartition(" ")
        frames = [frame for frame in stack.split(";") if frame]
        if frames and frames[0].startswith(("process ", "thread ")):  # py-spy's --threads/--pid labels
            frames = frames[1:]
        stacks.append((frames, int(count)))
    return stacks


def summarise(scenario: str, stacks: Sequence[tuple[list[str], int]], requests: int, server_cpu_s: float | None,
              gc: tuple[float, int] | None, gc_generations: Sequence[tuple[float, int]] = ()) -> Profile:
    by_stage: collections.Counter[str] = collections.Counter()
    leaves: collections.Counter[str] = collections.Counter()
    for frames, count in stacks:
        by_stage[classify(frames)] += count
        if frames:
            leaves[_short(frames[-1])] += count
    return Profile(
        scenario=scenario,
        samples=sum(by_stage.values()),
        by_stage=dict(by_stage),
        top_functions=leaves.most_common(25),
        requests=requests,
        server_cpu_s=server_cpu_s,
        gc_cpu_s=gc[0] if gc else None,
        gc_collections=gc[1] if gc else None,
        gc_generations=tuple(gc_generations),
    )


def _short(frame: str) -> str:
    function, _, location = frame.partition(" (")
    location = location.rstrip(")")
    for marker in ("site-packages/", "/hbserver/", "/lib/python3.11/"):
        if marker in location:
            location = ("hbserver/" if marker == "/hbserver/" else "") + location.split(marker, 1)[1]
            break
    return f"{function} ({location})"


def to_markdown(profile: Profile) -> str:
    total = profile.samples or 1
    per_request = profile.cpu_us_per_request()
    lines = [
        f"### {profile.scenario}",
        "",
        f"{profile.samples} samples over {profile.requests} requests"
        + (f"; server CPU {per_request:.0f} µs per request" if per_request else ""),
        "",
        "| stage | share of samples |",
        "|---|---:|",
    ]
    stages = [stage for stage, _, _ in STAGES] + [EVENT_LOOP]
    for stage in sorted(stages, key=lambda name: -profile.by_stage.get(name, 0)):
        count = profile.by_stage.get(stage, 0)
        if count:
            lines.append(f"| {stage} | {100 * count / total:.1f} % |")
    if profile.gc_cpu_s is not None and profile.server_cpu_s:
        lines += [
            "",
            f"GC (measured apart, gc.callbacks): {profile.gc_collections} collections, "
            f"{100 * profile.gc_cpu_s / profile.server_cpu_s:.1f} % of the server's CPU over the whole run.",
        ]
        if profile.gc_generations:
            lines[-1] += " By generation: " + ", ".join(
                f"{generation}: {count} ({1000 * spent:.0f} ms)"
                for generation, (spent, count) in enumerate(profile.gc_generations)
            ) + " (start-up's own collections included)."

    lines += ["", "Innermost functions (top 25):", "", "| function | share |", "|---|---:|"]
    for function, count in profile.top_functions:
        lines.append(f"| `{function}` | {100 * count / total:.1f} % |")
    return "\n".join(lines) + "\n"


def find_py_spy() -> str:
    for candidate in PY_SPY_CANDIDATES:
        if candidate.is_file():
            return str(candidate)
    found = shutil.which("py-spy")
    if found is None:
        raise SystemExit("bench.profile: py-spy is not installed (make tools installs it in .cache/tools)")
    return found


def profile_scenario(
    scenario: Scenario, seconds: int, rate: int, warmup_s: int, py_spy: str, keep_raw: Path | None = None,
    blocking: bool = False,
) -> Profile:
    """Sample one scenario under wrk load. ``blocking`` pauses the server at each sample: whole stacks
    (line-level shares can be trusted), at the price of a slower server (its CPU per request is then
    not the bench's); without it, py-spy reads the stacks while the server runs and some come torn."""
    pinning = detect_pinning()
    with tempfile.TemporaryDirectory(prefix="hbs-profile-") as scratch:
        root = Path(scratch)
        site = root / "site"
        site.mkdir()
        (site / "sitecustomize.py").write_text(GC_SITECUSTOMIZE)
        gc_file = root / "gc"
        python_path = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH", "")]))
        timed = dataclasses.replace(
            scenario, env={**scenario.env, "PYTHONPATH": python_path, "BENCH_GC_FILE": str(gc_file)}
        )
        workdir = root / "run"
        with serving(timed, workdir, pinning) as served:
            server = served.server
            command = WrkCommand(
                url=scenario.url(served.port, served.values),
                connections=scenario.wrk_connections(64),
                script=scenario.wrk_script(workdir),
                headers=scenario.wrk_headers(),
                cpu=pinning.client_cpu,
            )
            if warmup_s:
                run_wrk(command, warmup_s)
            raw = root / "stacks.txt"
            spy_argv = [py_spy, "record", "--pid", str(server.pid), "--rate", str(rate), "--duration",
                        str(seconds), "--format", "raw", "--output", str(raw)]
            if not blocking:
                spy_argv.append("--nonblocking")
            if pinning.client_cpu is not None:
                spy_argv = ["taskset", "-c", str(pinning.client_cpu), *spy_argv]
            spy = procs.start("py-spy", spy_argv, cwd=root, log_path=root / "py-spy.log")
            time.sleep(0.5)  # py-spy attaches before the load starts
            cpu_before = process_cpu_seconds(server.pid)
            result, _ = run_wrk(command, seconds)
            cpu_after = process_cpu_seconds(server.pid)
            deadline = time.monotonic() + 30
            while spy.alive() and time.monotonic() < deadline:
                time.sleep(0.2)
            if not raw.is_file():
                raise SystemExit(f"bench.profile: py-spy wrote nothing:\n{spy.log_tail()}")
            stacks = parse_collapsed(raw.read_text().splitlines())
            if keep_raw is not None:
                shutil.copyfile(raw, keep_raw)
        generations = _read_gc(gc_file)  # written by the server at exit
        cpu = None if cpu_before is None or cpu_after is None else cpu_after - cpu_before
        gc_totals = (sum(s for s, _ in generations), sum(n for _, n in generations)) if generations else None
        return summarise(scenario.name, stacks, result.requests, cpu, gc_totals, generations)


def _read_gc(prefix: Path) -> list[tuple[float, int]]:
    """(CPU seconds, collections) per generation, summed over the server's processes; [] when none wrote."""
    totals: list[tuple[float, int]] = []
    for path in prefix.parent.glob(prefix.name + ".*"):
        fields = path.read_text().split()
        pairs = [(float(fields[i]), int(fields[i + 1])) for i in range(0, len(fields) - 1, 2)]
        if not totals:
            totals = [(0.0, 0)] * len(pairs)
        totals = [(s + ps, n + pn) for (s, n), (ps, pn) in zip(totals, pairs, strict=True)]
    return totals


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.profile", description=__doc__.split("\n\n")[0])
    parser.add_argument("scenarios", nargs="+", help="scenario names (bench/scenarios.py)")
    parser.add_argument("--seconds", type=int, default=20, help="seconds of sampling under load (default 20)")
    parser.add_argument("--rate", type=int, default=250, help="py-spy samples per second (default 250)")
    parser.add_argument("--warmup", type=int, default=3, help="seconds of load before sampling (default 3)")
    parser.add_argument("--output", type=Path, help="write the Markdown tables here too")
    parser.add_argument("--raw-dir", type=Path, help="keep py-spy's collapsed stacks here (SCENARIO.stacks)")
    parser.add_argument("--blocking", action="store_true",
                        help="pause the server at each sample: whole stacks, but a slower server")
    args = parser.parse_args(argv)
    by_name = {scenario.name: scenario for scenario in SCENARIOS}
    unknown = [name for name in args.scenarios if name not in by_name]
    if unknown:
        parser.error(f"unknown scenario(s): {', '.join(unknown)}")
    py_spy = find_py_spy()
    sections = []
    for name in args.scenarios:
        keep_raw = args.raw_dir / f"{name}.stacks" if args.raw_dir is not None else None
        profile = profile_scenario(
            by_name[name], args.seconds, args.rate, args.warmup, py_spy, keep_raw, args.blocking
        )
        sections.append(to_markdown(profile))
        sys.stdout.write(sections[-1] + "\n")
    if args.output is not None:
        args.output.write_text("\n".join(sections))
    return 0


if __name__ == "__main__":
    sys.exit(main())
