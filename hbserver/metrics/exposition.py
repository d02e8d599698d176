"""The Prometheus text exposition as Prebid Server (Go's client_golang) writes it.

prometheus-client names counter samples ``<name>_total``; PBS-Go's counters have no suffix
(``prebid_server_requests``, not ``..._requests_total``), and dashboards and alerts written for
PBS query those names. This writer takes the collected families, from the in-process registry or
from the workers' files, and writes counters under their bare names; everything else as usual.
"""

from __future__ import annotations

from collections.abc import Iterable

from prometheus_client.metrics_core import Metric
from prometheus_client.utils import floatToGoString

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def _escape_help(text: str) -> str:
    return text.replace("\\", r"\\").replace("\n", r"\n")


def _escape_value(text: str) -> str:
    return text.replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")


def render_families(families: Iterable[Metric]) -> bytes:
    """The text format (version 0.0.4) of ``families``, counters without ``_total``."""
    out: list[str] = []
    for family in sorted(families, key=lambda f: f.name):
        name, kind = family.name, family.type
        if kind == "unknown":
            kind = "untyped"
        out.append(f"# HELP {name} {_escape_help(family.documentation)}\n# TYPE {name} {kind}\n")
        for sample in family.samples:
            sample_name = sample.name
            if kind == "counter":
                if sample_name.endswith("_created"):
                    continue
                if sample_name.endswith("_total"):
                    sample_name = sample_name[:-6]
            elif sample_name.endswith("_created") or sample_name.endswith("_gcount") or sample_name.endswith("_gsum"):
                continue
            if sample.labels:
                labels = ",".join(f'{key}="{_escape_value(value)}"' for key, value in sorted(sample.labels.items()))
                out.append(f"{sample_name}{{{labels}}} {floatToGoString(sample.value)}\n")
            else:
                out.append(f"{sample_name} {floatToGoString(sample.value)}\n")
    return "".join(out).encode()
