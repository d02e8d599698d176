"""The README's metrics table, made from the metric definitions themselves.

``python -m hbserver.metrics.catalogue README.md`` rewrites the table between its markers;
``tests/test_metrics.py`` fails when the README and the code disagree.
"""

from __future__ import annotations

import sys
from pathlib import Path

from hbserver.metrics import HBSERVER_FAMILIES, Metrics

START = "<!-- metrics-table:start (python -m hbserver.metrics.catalogue README.md) -->"
END = "<!-- metrics-table:end -->"

# The values each label takes (documentation only; PBS-Go's where the family is PBS-Go's).
LABEL_VALUES = {
    "request_type": "openrtb2-web, openrtb2-app, openrtb2-dooh, amp",
    "request_status": "ok, badinput, err, networkerr, blockedapp, acctconfigerr",
    "request_size": "auction",
    "adapter": "bidder code, lower-cased",
    "cookie": "exists, no, unknown",
    "has_bids": "true, false",
    "adapter_error": "badinput, badserverresponse, timeout, failedtorequestbid, tmaxtimeout, unknown_error",
    "delivery": "adm, nurl",
    "cache_result": "hit, miss",
    "stored_data_fetch_type": "all (request path), delta (database poll)",
    "stored_data_error": "network, undefined",
    "success": "true, false",
    "connection_error": "accept, close",
    "source": "request",
    "opt_out": "true, false",
    "version": "v2, err",
    "banner": "true, false", "video": "true, false", "audio": "true, false", "native": "true, false",
    "endpoint": "route, or other",
    "store": "memory, redis, remote",
    "module": "file, http, pubstack, agma, account_http",
    "generation": "0, 1, 2",
    "spec": "v2, v3",
    "result": "ok, err, fallback, missing",
}

# Where a family's label takes other values than LABEL_VALUES says: (family, label) -> its values.
FAMILY_LABEL_VALUES = {
    ("timeout_notification", "success"): "ok, failed",
    ("syncer_sets", "status"): "ok, cleared; sizedout, sizeblocked (PBS-Java's: a uid left out of every uids "
                               "cookie, priority or not)",
    ("module_calls", "module"): "module code, e.g. prebid.ortb2blocking",
    ("module_calls", "stage"): "entrypoint, raw_auction_request, ..., exitpoint",
    ("module_calls", "outcome"): "success_noop, success_updated, success_rejected, execution_error, failed, timeout",
    **{(f"{level}_response_validation_{rule}_{mode}", "success"): "always success, as PBS-Go writes it"
       for level in ("adapter", "account") for rule in ("size", "secure") for mode in ("err", "warn")},
    ("adapter_response_validation_bids", "rule"): "adm_or_nurl, media_type, vast_protocol",
    ("adapter_response_validation_bids", "outcome"): "err (enforce: removed), warn (kept)",
    ("profiles", "reason"): "missing, invalid",
    ("account_profiles", "reason"): "missing, limit_exceeded",
}


def _label_text(family: str, label: str) -> str:
    values = FAMILY_LABEL_VALUES.get((family, label)) or LABEL_VALUES.get(label)
    return f"`{label}` ({values})" if values else f"`{label}`"


def table(metrics: Metrics | None = None) -> str:
    metrics = metrics or Metrics()
    prefix = metrics.prefix
    lines = [
        "| metric | type | labels | from | what it counts |",
        "|---|---|---|---|---|",
    ]
    helps = {family.name: family.documentation for family in metrics.registry.collect()}
    for name, kind, labels in metrics.describe():
        short = name.removeprefix(prefix)
        origin = "hbserver" if short in HBSERVER_FAMILIES else "PBS-Go"
        label_text = ", ".join(_label_text(short, label) for label in labels) or "—"
        help_text = helps.get(name, "").replace("|", "\\|").strip()
        lines.append(f"| `{name}` | {kind} | {label_text} | {origin} | {help_text} |")
    return "\n".join(lines)


def replace_table(text: str, new_table: str) -> str:
    head, start, rest = text.partition(START)
    _old, end, tail = rest.partition(END)
    if not start or not end:
        raise ValueError("the README has no metrics table markers")
    return f"{head}{START}\n{new_table}\n{END}{tail}"


def main(argv: list[str]) -> int:
    path = Path(argv[0] if argv else "README.md")
    path.write_text(replace_table(path.read_text(), table()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
