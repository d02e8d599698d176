"""``make dashboard-preview`` / ``python -m bench.dashboard_preview``: the Grafana dashboard
(deploy/grafana/hbserver-dashboard.json) rendered from real Prometheus data, without Grafana.

It starts the stack tests/observability uses (a two-worker hbserver with its admin port, loopback
bidders of which one fails and one is too slow, Debian's Prometheus scraping every second), drives
the same mix of requests for ``--seconds`` in three phases (gentle, busier, gentle), then asks
Prometheus for every panel query over the load window (``/api/v1/query_range``, one point a second)
and draws each panel as a small time series chart in one grid: bench/results/dashboard.png. Panels
with no data are marked in red and listed. Needs /usr/bin/prometheus (`bash scripts/prometheus.sh`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.scenarios import BENCH_DIR
from tests.observability.stack import (
    DASHBOARD,
    INSTALL_HINT,
    LoadReport,
    Stack,
    dashboard_panels,
    drive_load,
    prometheus_missing,
    running_stack,
    substitute,
    wait_counted,
)

DEFAULT_OUT = BENCH_DIR / "results" / "dashboard.png"
RATE_INTERVAL = "5s"  # Grafana's $__rate_interval at a 1 s scrape interval and a short range: 4 x scrape
COLUMNS = 6
MAX_LEGEND = 6
PHASE_PAUSES = (0.3, 0.05, 0.3)  # seconds between rounds in each third of the load
_LEGEND_LABEL = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def legend(template: str, labels: dict[str, str]) -> str:
    return _LEGEND_LABEL.sub(lambda m: labels.get(m.group(1), ""), template) or str(labels)


async def phased_load(stack: Stack, seconds: float) -> LoadReport:
    """The load in three phases; one report for the whole window."""
    reports = [await drive_load(stack, seconds / len(PHASE_PAUSES), pause=pause) for pause in PHASE_PAUSES]
    total = reports[0]
    for report in reports[1:]:
        total.statuses.update(report.statuses)
        total.by_path.update(report.by_path)
        total.disconnects += report.disconnects
    total.ended = reports[-1].ended
    return total


def collect(
    stack: Stack, start: float, end: float, empty: list[str]
) -> list[tuple[str, dict[str, Any], list[Any]]]:
    """(row title, panel, [(legend, [(t, value)])] per series) for every panel, in dashboard order;
    the queries that returned no series are added to ``empty``."""
    row_of: dict[int, str] = {}
    row = ""
    for panel in json.loads(DASHBOARD.read_text())["panels"]:
        if panel.get("type") == "row":
            row = panel["title"]
        row_of[panel["id"]] = row
    out = []
    for panel in dashboard_panels():
        lines = []
        for target in panel["targets"]:
            expr = substitute(target["expr"], RATE_INTERVAL)
            result = stack.prometheus.query_range(expr, start, end, 1)
            if not result:
                empty.append(f"{panel['title']} [{target['refId']}]: {expr}")
            for series in result:
                points = [(float(t) - start, float(v)) for t, v in series["values"]]
                lines.append((legend(target.get("legendFormat", ""), series["metric"]), points))
        out.append((row_of.get(panel["id"], ""), panel, lines))
    return out


def draw(panels: list[tuple[str, dict[str, Any], list[Any]]], out: Path, note: str) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # Agg: no display needed
    from matplotlib.figure import Figure

    rows = -(-len(panels) // COLUMNS)
    figure = Figure(figsize=(COLUMNS * 4.2, rows * 2.9), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(rows, COLUMNS, squeeze=False)
    for index, ax in enumerate(axes.flat):
        if index >= len(panels):
            ax.set_visible(False)
            continue
        row, panel, lines = panels[index]
        ax.set_title(f"{row} · {panel['title']}", fontsize=8, loc="left")
        ax.tick_params(labelsize=6)
        ax.grid(alpha=0.3)
        unit = panel.get("fieldConfig", {}).get("defaults", {}).get("unit", "")
        if unit:
            ax.set_ylabel(unit, fontsize=6)
        drawn = [(name, points) for name, points in lines if points]
        if not drawn:
            ax.text(0.5, 0.5, "no data", color="red", ha="center", va="center", transform=ax.transAxes)
            continue
        for name, points in drawn[:12]:
            xs, ys = zip(*points, strict=True)
            ax.plot(xs, ys, linewidth=1, label=name[:40])
        handles, labels = ax.get_legend_handles_labels()
        ax.legend(handles[:MAX_LEGEND], labels[:MAX_LEGEND], fontsize=5, loc="upper left")
    figure.suptitle(note, fontsize=10)
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out, dpi=90)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0, help="load duration (default 30)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"the PNG (default {DEFAULT_OUT})")
    args = parser.parse_args(argv)
    if args.seconds < 3:
        parser.error("--seconds must be at least 3")
    missing = prometheus_missing()
    if missing:
        print(f"dashboard-preview: {missing}; {INSTALL_HINT}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="hbs-dashboard-") as workdir, running_stack(Path(workdir)) as stack:
        report = asyncio.run(phased_load(stack, args.seconds))
        wait_counted(stack, report)
        time.sleep(2)  # one more scrape after the last flush
        start, end = report.started - 5, time.time()
        empty: list[str] = []
        panels = collect(stack, start, end, empty)
    note = (f"hbserver dashboard preview: {len(panels)} panels from a real Prometheus (1 s scrape), "
            f"2 workers, {report.total} requests over {args.seconds:g} s; $__rate_interval = {RATE_INTERVAL}; "
            f"failbidder answers 500, slowbidder misses the deadline; x axis: seconds")
    draw(panels, args.out, note)
    for query in empty:
        print(f"dashboard-preview: no data: {query}", file=sys.stderr)
    print(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
