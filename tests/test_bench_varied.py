"""bench/varied.py and bench/scripts/varied.lua: requests that vary per request, the same in Python and in wrk."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import threading
from collections import Counter
from pathlib import Path

import pytest

from bench import varied
from bench.report import at_most, build_report
from bench.scenarios import SCENARIOS, VARIED_SCENARIOS, Scenario, select
from bench.wrk import WrkCommand
from hbserver.privacy.tcf2 import parse_tcf2

WRK = shutil.which("wrk")


@pytest.mark.parametrize(
    ("text", "n", "expected"),
    [
        ("/x?id={{n}}", 7, "/x?id=7"),
        ("{{ip}}", 1, "11.0.0.1"),
        ("{{ip}}", 70_000, "11.1.17.112"),
        ("{{page}}", 5, "new5"),
        ("{{page}}", 1, "p19"),  # 7919 % 50
        ("a{{n}}b{{n}}c", 12, "a12b12c"),
        ("no tokens", 3, "no tokens"),
    ],
)
def test_template_renders_each_token(text, n, expected):
    assert varied.Template.of(text).render(n) == expected


def test_unknown_token_is_refused():
    with pytest.raises(ValueError, match="unknown token"):
        varied.Template.of("{{nope}}")


def test_page_mix_is_one_in_five_new_and_fifty_repeating():
    pages = [varied.page(n) for n in range(1, 10_001)]
    new = [page for page in pages if page.startswith("new")]
    assert len(new) == 2000 and len(set(new)) == 2000
    repeating = Counter(page for page in pages if not page.startswith("new"))
    assert len(repeating) == varied.MIXED_PAGES


def test_tcf_strings_differ_per_request_and_decode_with_the_same_consents():
    base = parse_tcf2(varied.TCF_BASE)
    strings = {varied.tcf(n) for n in range(1, 500)}
    assert len(strings) == 499
    for n in (1, 64, 4097, 10**7):
        consent = parse_tcf2(varied.tcf(n))
        assert consent.created != base.created
        assert consent.vendor_consents == base.vendor_consents
        assert consent.purpose_consents == base.purpose_consents


def test_varied_scenarios_are_varied_and_judged():
    names = {scenario.name for scenario in VARIED_SCENARIOS}
    assert {"auction_varied", "amp_varied", "amp_mixed", "cookie_sync_varied", "setuid_varied"} <= names
    for scenario in VARIED_SCENARIOS:
        assert scenario.varied or scenario.name == "status", scenario.name
        assert scenario.judged or scenario.name == "auction_varied", scenario.name
    assert select("amp_varied")[0].cpu_at_most == ("auction_varied", 1.10)
    assert select("amp_mixed")[0].cpu_at_most == ("amp_varied", 1.03)
    assert not any(s.varied for s in SCENARIOS if s not in VARIED_SCENARIOS)


@pytest.mark.parametrize(
    ("value", "reference", "factor", "met"),
    [(100.0, 100.0, 1.0, True), (110.0, 100.0, 1.1, True), (111.0, 100.0, 1.1, False), (1.0, None, 1.0, None)],
)
def test_at_most(value, reference, factor, met):
    assert at_most(value, reference, factor) is met


def test_report_judges_cpu_at_most():
    from bench.report import RunOutcome
    from bench.wrk import WrkResult

    def outcome(cpu_us: float) -> RunOutcome:
        result = WrkResult(1000.0, 1000, 1000.0, 1.0, 2.0, {"50": 1.0, "99": 2.0})
        return RunOutcome(1, result, server_cpu_s=cpu_us * 1000 / 1e6)

    amp, auction = select("amp_varied")[0], select("auction_varied")[0]
    outcomes = {"hello": [outcome(20.0)], "auction_varied": [outcome(400.0)]}
    for cpu, status in ((430.0, "PASS"), (450.0, "FAIL")):
        report = build_report({"connections": 64}, {}, [auction, amp], {**outcomes, "amp_varied": [outcome(cpu)]})
        entry = report["scenarios"][2]
        assert (entry["name"], entry["status"], entry["cpu_at_most_reference_us"]) == ("amp_varied", status, 400.0)


class _Capture(asyncio.Protocol):
    """Records the raw requests of one connection and answers each with an empty 200."""

    def __init__(self, into: list[bytes]) -> None:
        self.into, self.buf = into, b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buf += data
        while b"\r\n\r\n" in self.buf:
            head, rest = self.buf.split(b"\r\n\r\n", 1)
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            if len(rest) < length:
                return
            self.into.append(head + b"\r\n\r\n" + rest[:length])
            self.buf = rest[length:]
            self.transport.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")  # type: ignore[attr-defined]


def _wrk_requests(scenario: Scenario, tmp_path: Path, count: int) -> list[bytes]:
    """The first ``count`` requests wrk sends for ``scenario`` (one connection, so in order)."""
    seen: list[bytes] = []
    loop = asyncio.new_event_loop()
    server = loop.run_until_complete(loop.create_server(lambda: _Capture(seen), "127.0.0.1", 0))
    port = server.sockets[0].getsockname()[1]
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        script = scenario.wrk_script(tmp_path)
        assert script is not None
        command = WrkCommand(f"http://127.0.0.1:{port}/", 1, script=script, headers=scenario.wrk_headers())
        subprocess.run(command.argv(1), capture_output=True, timeout=30, check=True)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        server.close()
    assert len(seen) >= count
    return seen[:count]


@pytest.mark.skipif(WRK is None, reason="wrk is installed by make test and make bench")
@pytest.mark.parametrize("name", ["auction_varied", "amp_mixed", "cookie_sync_varied"])
def test_wrk_sends_what_python_renders(tmp_path, name):
    scenario = select(name)[0]
    requests = _wrk_requests(scenario, tmp_path, 12)
    path, body = varied.Template.of(scenario.path), varied.Template.of(scenario.body_text())

    def rendered(n: int) -> tuple[str, str]:
        return f"{scenario.method} {path.render(n)} HTTP/1.1", body.render(n) if scenario.body_file else ""

    sent = []
    for raw in requests:
        head, _, sent_body = raw.partition(b"\r\n\r\n")
        sent.append((head.split(b"\r\n")[0].decode(), sent_body.decode()))
    # wrk calls request() once before it connects, so its first request may be number 2
    assert sent in ([rendered(n) for n in range(first, first + len(sent))] for first in (1, 2))
