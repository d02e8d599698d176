"""A real observability stack on loopback, shared by tests/observability and bench/dashboard_preview.py:

- hbserver as a real process with two workers, ``/metrics`` on its admin port, analytics to a file,
  the memory cache store, server currency rates and three ``alias_of: generic`` bidders;
- loopback upstreams: ``goodbidder`` (bids at varied prices), ``failbidder`` (answers 500),
  ``slowbidder`` (answers after the auction deadline) and the currency file;
- Debian's Prometheus (scrape and evaluation every second, its own free port and scratch TSDB)
  scraping the admin port with a copy of deploy/prometheus/alerts.yml whose ``for:`` is shortened;
- :func:`drive_load`: a few seconds of every kind of request, so that every dashboard panel has data.

Also the readers of deploy/: the dashboard's panel queries and the alert rules.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import re
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import aiohttp
import yaml

from tests.e2e.helpers import Server, free_port, get

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "deploy" / "grafana" / "hbserver-dashboard.json"
ALERTS = ROOT / "deploy" / "prometheus" / "alerts.yml"
ALERTS_TEST = ROOT / "deploy" / "prometheus" / "alerts_test.yml"
RUNBOOK = ROOT / "deploy" / "RUNBOOK.md"
PROMETHEUS = Path("/usr/bin/prometheus")
PROMTOOL = Path("/usr/bin/promtool")
INSTALL_HINT = "`bash scripts/prometheus.sh` installs Debian's prometheus package (`make test` runs it)"

JOB = "hbserver"  # the scrape job's name, as in deploy/prometheus.yml (HbserverTargetDown matches it)
SCRAPE_INTERVAL = "1s"
RULE_HOLD = "1s"  # every alert's `for:` in the live copy of the rules
GOOD, FAIL, SLOW = "goodbidder", "failbidder", "slowbidder"
SLOW_BIDDER_SECONDS = 0.6
SLOW_TMAX_MS = 250  # auctions with the slow bidder: it always misses this deadline
AMP_TAG = "amp-slot-1"
ACCOUNT = "pub-1"
PRICES = (0.2, 0.45, 0.8, 1.1, 1.6, 2.2, 2.7, 3.2, 3.7, 4.5)
VAST = ('<VAST version="3.0"><Ad id="1"><Wrapper><AdSystem>t</AdSystem>'
        "<VASTAdTagURI>https://x.example/v</VASTAdTagURI></Wrapper></Ad></VAST>")
CURRENCY_FILE = {"dataAsOf": "2026-01-01T00:00:00.000Z", "conversions": {"USD": {"EUR": 0.9, "GBP": 0.8}}}
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never through an http_proxy


def prometheus_missing() -> str | None:
    """Why the stack cannot run here, or None."""
    missing = [str(path) for path in (PROMETHEUS, PROMTOOL) if not path.exists()]
    return f"Debian's prometheus package is not installed ({', '.join(missing)} missing)" if missing else None


# --- deploy/: the dashboard's queries and the alert rules ---------------------------------------

@dataclass(frozen=True)
class PanelQuery:
    panel: str
    ref_id: str
    expr: str

    @property
    def id(self) -> str:
        return f"{self.panel} [{self.ref_id}]"


def dashboard_panels(path: Path = DASHBOARD) -> list[dict[str, Any]]:
    """Every non-row panel, including those inside collapsed rows."""
    out: list[dict[str, Any]] = []
    for panel in json.loads(path.read_text())["panels"]:
        if panel.get("type") == "row":
            out.extend(panel.get("panels", []))
        else:
            out.append(panel)
    return out


def dashboard_queries(path: Path = DASHBOARD) -> list[PanelQuery]:
    return [
        PanelQuery(panel["title"], target["refId"], target["expr"])
        for panel in dashboard_panels(path)
        for target in panel.get("targets", [])
    ]


def substitute(expr: str, rate_interval: str = "30s") -> str:
    """A panel query as Grafana sends it: ``$__rate_interval`` and ``$instance`` (All) filled in."""
    return expr.replace("$__rate_interval", rate_interval).replace("$instance", ".*")


@dataclass(frozen=True)
class AlertRule:
    name: str
    expr: str
    hold: str
    labels: dict[str, str]
    annotations: dict[str, str]


def alert_rules(path: Path = ALERTS) -> list[AlertRule]:
    rules = []
    for group in yaml.safe_load(path.read_text())["groups"]:
        for rule in group["rules"]:
            if "alert" in rule:
                rules.append(AlertRule(rule["alert"], rule["expr"], rule.get("for", ""), rule.get("labels", {}),
                                       rule.get("annotations", {})))
    return rules


_FINAL_COMPARISON = re.compile(r"\s*(?:==|!=|>=|<=|>|<)\s*(?:bool\s+)?-?[0-9.]+(?:e[-+]?[0-9]+)?\s*$")


def alert_signal(expr: str) -> str:
    """The expression without its final comparison with a number: what the alert watches."""
    signal, n = _FINAL_COMPARISON.subn("", expr.strip())
    if n != 1:
        raise ValueError(f"no final comparison with a number in {expr!r}")
    return signal


def write_live_rules(dst: Path, hold: str = RULE_HOLD, src: Path = ALERTS) -> Path:
    """A copy of the rules with every ``for:`` set to ``hold``, so alerts fire within a test."""
    document = yaml.safe_load(src.read_text())
    for group in document["groups"]:
        for rule in group["rules"]:
            if "alert" in rule:
                rule["for"] = hold
    dst.write_text(yaml.safe_dump(document, sort_keys=False))
    return dst


# --- loopback upstreams: bidders and the currency file ------------------------------------------

class Upstreams:
    """The bidders' endpoints and the currency file on one threaded loopback HTTP server."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self._prices = itertools.cycle(PRICES)
        upstreams = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive: hbserver's connections are reused

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                name = self.path.strip("/")
                upstreams.calls[name] += 1
                if name == GOOD:
                    self._answer(200, upstreams.bids(json.loads(body)), "application/json")
                elif name == SLOW:
                    time.sleep(SLOW_BIDDER_SECONDS)
                    self._answer(204, b"")
                else:  # failbidder, or anything unexpected
                    self._answer(500, b"upstream failure", "text/plain")

            def do_GET(self) -> None:
                upstreams.calls[self.path] += 1
                if self.path.startswith("/currency.json"):
                    self._answer(200, json.dumps(CURRENCY_FILE).encode(), "application/json")
                else:
                    self._answer(200, b"", "text/plain")

            def _answer(self, status: int, body: bytes, content_type: str = "") -> None:
                try:
                    self.send_response(status)
                    if content_type:
                        self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except OSError:  # hbserver gave up on the slow bidder and closed the connection
                    self.close_connection = True

            def log_message(self, *args: object) -> None:
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 256  # the default backlog of 5 drops bursts of connections (1 s SYN retries)

        self.server = Server(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def bids(self, request: dict[str, Any]) -> bytes:
        bids = []
        for imp in request.get("imp", []):
            video = "video" in imp
            bids.append({
                "id": f"b-{imp['id']}", "impid": imp["id"], "price": next(self._prices), "crid": "cr-1",
                "adm": VAST if video else "<div>ad</div>", "w": 640 if video else 300, "h": 480 if video else 250,
                "mtype": 2 if video else 1, "adomain": ["advertiser.example"],
            })
        return json.dumps({"id": request.get("id", ""), "cur": "USD", "seatbid": [{"bid": bids}]}).encode()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# --- Prometheus ----------------------------------------------------------------------------------

class PrometheusError(Exception):
    """Prometheus's HTTP API refused a query."""


def _api(url: str, timeout: float = 10) -> Any:
    try:
        with _DIRECT.open(url, timeout=timeout) as response:
            document = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        document = json.loads(exc.read() or b"{}")
    if document.get("status") != "success":
        raise PrometheusError(f"{document.get('errorType')}: {document.get('error')} ({url})")
    return document["data"]


class Prometheus:
    """Debian's ``prometheus`` on a free loopback port with a scratch TSDB in ``workdir``."""

    def __init__(self, workdir: Path, targets: list[str], rules: Path) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        config = workdir / "prometheus.yml"
        config.write_text(yaml.safe_dump({
            "global": {"scrape_interval": SCRAPE_INTERVAL, "evaluation_interval": SCRAPE_INTERVAL,
                       "scrape_timeout": SCRAPE_INTERVAL},
            "rule_files": [str(rules)],
            "scrape_configs": [{"job_name": JOB, "metrics_path": "/metrics",
                                "static_configs": [{"targets": targets}]}],
        }))
        self.log = open(workdir / "prometheus.log", "w+b")
        self.proc = subprocess.Popen(
            [str(PROMETHEUS), f"--config.file={config}", f"--storage.tsdb.path={workdir / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn"],
            cwd=workdir, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
        )

    def output(self) -> str:
        self.log.flush()
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    def wait_ready(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"prometheus exited with {self.proc.returncode}:\n{self.output()}")
            try:
                with _DIRECT.open(self.base + "/-/ready", timeout=1) as response:
                    if response.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.1)
        raise AssertionError(f"prometheus not ready after {timeout}s:\n{self.output()}")

    def query(self, expr: str, at: float | None = None) -> list[dict[str, Any]]:
        params = {"query": expr, **({"time": f"{at:.3f}"} if at is not None else {})}
        data = _api(f"{self.base}/api/v1/query?{urllib.parse.urlencode(params)}")
        result = data["result"]
        return result if data["resultType"] in ("vector", "matrix") else [{"metric": {}, "value": result}]

    def query_range(self, expr: str, start: float, end: float, step: float) -> list[dict[str, Any]]:
        params = {"query": expr, "start": f"{start:.3f}", "end": f"{end:.3f}", "step": f"{step:g}"}
        return _api(f"{self.base}/api/v1/query_range?{urllib.parse.urlencode(params)}")["result"]

    def alerts(self) -> list[dict[str, Any]]:
        return _api(f"{self.base}/api/v1/alerts")["alerts"]

    def metric_names(self) -> set[str]:
        return set(_api(f"{self.base}/api/v1/label/__name__/values"))

    def wait_for(self, expr: str, timeout: float = 20) -> list[dict[str, Any]]:
        """Poll ``expr`` until it returns a series."""
        deadline = time.monotonic() + timeout
        while True:
            result = self.query(expr)
            if result or time.monotonic() > deadline:
                return result
            time.sleep(0.25)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.log.close()


# --- hbserver --------------------------------------------------------------------------------------

def hbserver_config(workdir: Path, port: int, admin_port: int, upstreams: str) -> Path:
    stored = workdir / "stored"
    for kind in ("accounts", "stored_requests", "stored_imps", "stored_responses"):
        (stored / kind).mkdir(parents=True, exist_ok=True)
    (stored / "stored_requests" / f"{AMP_TAG}.json").write_text(json.dumps({
        "id": "amp-request", "site": {"page": "https://amp.example/article", "publisher": {"id": ACCOUNT}},
        "imp": [{"id": "amp-imp", "banner": {"format": [{"w": 300, "h": 250}]},
                 "ext": {"prebid": {"bidder": {GOOD: {}, FAIL: {}}}}}],
        "ext": {"prebid": {"targeting": {}, "cache": {"bids": {}}}},
    }))
    (stored / "accounts" / f"{ACCOUNT}.json").write_text(json.dumps({"id": ACCOUNT}))

    def bidder(name: str) -> dict[str, Any]:
        return {"alias_of": "generic", "endpoint": f"{upstreams}/{name}",
                "usersync": {"redirect": {"url": f"{upstreams}/sync?r={{{{.RedirectURL}}}}", "user_macro": "$UID"}}}

    config = {
        "host": "127.0.0.1", "port": port, "workers": 2, "external_url": f"http://127.0.0.1:{port}",
        "admin": {"port": admin_port},
        "stored_requests": {"filesystem": {"enabled": True, "directorypath": str(stored)}},
        "cache": {"store": "memory"},
        "currency": {"fetch_url": f"{upstreams}/currency.json"},
        "analytics": {"file": {"filename": str(workdir / "analytics.jsonl")}},
        "adapters": {name: bidder(name) for name in (GOOD, FAIL, SLOW)},
    }
    path = workdir / "hbserver.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


@dataclass
class Stack:
    workdir: Path
    upstreams: Upstreams
    hbserver: Server
    admin: str
    prometheus: Prometheus

    @property
    def base(self) -> str:
        return self.hbserver.base


def _wait_for_workers(admin: str, workers: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    text = ""
    while time.monotonic() < deadline:
        try:
            status, body = get(f"{admin}/metrics", timeout=2)
            text = body.decode(errors="replace")
            if status == 200 and re.search(rf"^hbserver_workers(?:\{{\}})? {workers}(?:\.0)?$", text, re.M):
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise AssertionError(f"{workers} workers not reported on {admin}/metrics after {timeout}s:\n{text[:2000]}")


@contextlib.contextmanager
def running_stack(workdir: Path, rule_hold: str = RULE_HOLD) -> Iterator[Stack]:
    """Upstreams, hbserver (two workers) and Prometheus scraping it; all stopped on exit."""
    workdir.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:
        upstreams = Upstreams()
        stack.callback(upstreams.close)
        port, admin_port = free_port(), free_port()
        config = hbserver_config(workdir, port, admin_port, upstreams.base)
        server = Server("--config", str(config), "--workers", "2", cwd=workdir, port=port)
        stack.callback(server.stop)
        server.wait_ready()
        admin = f"http://127.0.0.1:{admin_port}"
        _wait_for_workers(admin, 2)
        rules = write_live_rules(workdir / "alerts-live.yml", rule_hold)
        prometheus = Prometheus(workdir, [f"127.0.0.1:{admin_port}"], rules)
        stack.callback(prometheus.stop)
        prometheus.wait_ready()
        if not prometheus.wait_for(f'up{{job="{JOB}"}} == 1'):
            raise AssertionError(f"prometheus never scraped {admin}/metrics:\n{prometheus.output()}")
        yield Stack(workdir, upstreams, server, admin, prometheus)


# --- the load -------------------------------------------------------------------------------------

@dataclass
class LoadReport:
    statuses: Counter[tuple[str, int]] = field(default_factory=Counter)  # (kind, status) -> answers
    by_path: Counter[str] = field(default_factory=Counter)  # request path -> answers
    slowest: dict[str, float] = field(default_factory=dict)  # kind -> the longest answer (seconds)
    disconnects: int = 0
    started: float = 0.0
    ended: float = 0.0

    @property
    def total(self) -> int:
        return sum(self.statuses.values()) + self.disconnects


def _banner_imp(n: int, bidders: tuple[str, ...]) -> dict[str, Any]:
    return {"id": f"imp-{n}", "banner": {"format": [{"w": 300, "h": 250}]},
            "ext": {"prebid": {"bidder": {b: {} for b in bidders}}}}


def _video_imp(n: int, bidders: tuple[str, ...]) -> dict[str, Any]:
    return {"id": f"vimp-{n}", "video": {"mimes": ["video/mp4"], "w": 640, "h": 480, "protocols": [2, 3]},
            "ext": {"prebid": {"bidder": {b: {} for b in bidders}}}}


# Privacy signals rotated over the auctions (regs, user, device fragments).
_PRIVACY: tuple[dict[str, Any], ...] = (
    {},
    {"regs": {"gdpr": 1}, "user": {"consent": "CPzsEhgPzsEhgAGABCENBJCgAP_AAH_AAAAAAAAAAAA"}},
    {"regs": {"gdpr": 1}, "user": {"consent": "not-a-consent-string"}},
    {"regs": {"us_privacy": "1YYN"}},
    {"regs": {"us_privacy": "1YNN"}},
    {"regs": {"coppa": 1}},
    {"device": {"lmt": 1, "ua": "Mozilla/5.0", "ip": "203.0.113.7"}},
)


def auction_request(n: int, *, app: bool = False, video: bool = False, slow: bool = False,
                    debug: bool = False) -> dict[str, Any]:
    bidders = (GOOD, SLOW) if slow else (GOOD, FAIL)
    imps = [_video_imp(n, bidders)] if video else [_banner_imp(n, bidders), _banner_imp(n + 100000, bidders)]
    request: dict[str, Any] = {
        "id": f"auction-{n}", "imp": imps, "tmax": SLOW_TMAX_MS if slow else 800,
        "ext": {"prebid": {"targeting": {}, "cache": {"bids": {}, **({"vastxml": {}} if video else {})}}},
    }
    if app:
        request["app"] = {"bundle": "com.example.app", "publisher": {"id": ACCOUNT}}
    else:
        request["site"] = {"page": "https://publisher.example/article", "publisher": {"id": ACCOUNT}}
    if debug:
        request["test"] = 1
    for key, value in _PRIVACY[n % len(_PRIVACY)].items():
        request[key] = {**request.get(key, {}), **value}
    return request


class _Load:
    def __init__(self, stack: Stack, session: aiohttp.ClientSession, report: LoadReport) -> None:
        self.base = stack.base
        self.session = session
        self.report = report
        self.cookie = ""

    async def call(self, kind: str, method: str, path: str, **kwargs: Any) -> tuple[int, bytes, aiohttp.ClientResponse]:
        headers = kwargs.pop("headers", {})
        if self.cookie and kwargs.pop("with_cookie", True):
            headers = {**headers, "Cookie": f"uids={self.cookie}"}
        else:
            kwargs.pop("with_cookie", None)
        sent = time.monotonic()
        async with self.session.request(method, self.base + path, headers=headers, **kwargs) as response:
            body = await response.read()
            self.report.statuses[(kind, response.status)] += 1
            self.report.by_path[path.split("?", 1)[0]] += 1
            self.report.slowest[kind] = max(self.report.slowest.get(kind, 0.0), time.monotonic() - sent)
            return response.status, body, response

    async def sync_users(self) -> None:
        """/setuid for two syncers: the uids cookie later auctions and syncs carry."""
        for bidder in (GOOD, FAIL):
            headers = {"Cookie": f"uids={self.cookie}"} if self.cookie else {}
            async with self.session.get(f"{self.base}/setuid?bidder={bidder}&uid=user-{bidder}&f=i",
                                        headers=headers) as response:
                await response.read()
                self.report.statuses[("setuid", response.status)] += 1
                self.report.by_path["/setuid"] += 1
                morsel = response.cookies.get("uids")
                if morsel is not None and morsel.value:
                    self.cookie = morsel.value

    async def disconnect(self, n: int) -> None:
        """An auction whose client hangs up before the answer (it waits for the slow bidder).

        Without privacy signals: a GDPR request without vendor consent calls no bidder and would
        be answered before the hang-up."""
        request = auction_request(n, slow=True)
        request.pop("regs", None)
        request.pop("user", None)
        body = json.dumps(request).encode()
        port = int(self.base.rsplit(":", 1)[1])
        _reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"POST /openrtb2/auction HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        await writer.drain()
        await asyncio.sleep(0.05)
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
        self.report.disconnects += 1

    async def round(self, n: int) -> None:
        """One of each kind of request (n varies ids and privacy signals)."""
        auction = "/openrtb2/auction"
        await asyncio.gather(
            self.call("auction", "POST", auction, json=auction_request(n)),
            self.call("auction-nocookie", "POST", auction, json=auction_request(n + 1), with_cookie=False),
            self.call("auction-app", "POST", auction, json=auction_request(n + 2, app=True)),
            self.call("auction-video", "POST", auction, json=auction_request(n + 3, video=True)),
            self.call("auction-slow", "POST", auction, json=auction_request(n + 4, slow=True)),
            self.call("amp", "GET", f"/openrtb2/amp?tag_id={AMP_TAG}&w=300&h=250&timeout=800"),
            self.call("cookie_sync", "POST", "/cookie_sync", json={"bidders": [GOOD, FAIL, SLOW]}),
            self.call("cookie_sync", "POST", "/cookie_sync", json={"bidders": [GOOD, SLOW], "gdpr": 1,
                                                                    "gdpr_consent": "not-a-consent-string"},
                      with_cookie=False),
            self.call("setuid", "GET", f"/setuid?bidder={SLOW}&uid=user-{n}&f=i"),
            self.call("setuid", "GET", f"/setuid?bidder={SLOW}&uid=&f=i"),
            self.call("event", "GET", f"/event?t=win&b=bid-{n}&a={ACCOUNT}&bidder={GOOD}&f=i"),
            self.call("event", "GET", f"/event?t=imp&b=bid-{n}&a={ACCOUNT}&bidder={GOOD}&f=i"),
            self.call("vtrack", "POST", f"/vtrack?a={ACCOUNT}",
                      json={"puts": [{"bidid": f"bid-{n}", "bidder": GOOD, "type": "xml", "value": VAST,
                                      "ttlseconds": 60}]}),
            self.cache_round(n),
            self.call("4xx", "POST", auction, data=b"{not json", headers={"Content-Type": "application/json"}),
            self.call("4xx", "GET", "/no/such/route"),
            self.call("4xx", "GET", "/setuid?uid=x"),
            self.call("4xx", "GET", "/setuid?bidder=nosuchbidder&uid=x"),
            self.call("4xx", "GET", "/openrtb2/amp?tag_id=no-such-tag"),
        )
        if n % 5 == 0:
            await asyncio.gather(
                self.call("auction-debug", "POST", auction, json=auction_request(n + 5, debug=True)),
                self.disconnect(n + 6),
            )

    async def cache_round(self, n: int) -> None:
        status, body, _ = await self.call("cache", "POST", "/cache",
                                          json={"puts": [{"type": "json", "value": {"n": n}, "ttlseconds": 60}]})
        if status == 200:
            uuid = json.loads(body)["responses"][0]["uuid"]
            await self.call("cache", "GET", f"/cache?uuid={uuid}")
        await self.call("cache", "GET", f"/cache?uuid=missing-{n}")


async def drive_load(stack: Stack, seconds: float = 5.0, concurrency: int = 2, pause: float = 0.2) -> LoadReport:
    """Rounds of every kind of request (about 25 each) for ``seconds``: ``concurrency`` rounds at a time,
    each followed by ``pause`` seconds. Gentle, so that the latency panels show the server rather than
    a saturated machine (two CPUs run hbserver, Prometheus, the upstreams and this load)."""
    report = LoadReport(started=time.time())
    timeout = aiohttp.ClientTimeout(total=10)
    connector = aiohttp.TCPConnector(limit=64)
    async with aiohttp.ClientSession(timeout=timeout, connector=connector) as session:
        load = _Load(stack, session, report)
        await load.sync_users()
        deadline = time.monotonic() + seconds
        counter = itertools.count(0, 10)

        async def worker() -> None:
            while time.monotonic() < deadline:
                await load.round(next(counter))
                await asyncio.sleep(pause)

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    report.ended = time.time()
    return report


COUNTED_PATHS = ("/openrtb2/auction", "/openrtb2/amp", "/cookie_sync", "/setuid", "/event", "/vtrack", "/cache")


def wait_counted(stack: Stack, report: LoadReport, timeout: float = 15) -> dict[str, float]:
    """Wait until Prometheus has scraped every answer of the load (workers flush every second);
    the requests counted per endpoint (``hbserver_http_requests``) at the last poll."""
    deadline = time.monotonic() + timeout
    while True:
        counted = {
            series["metric"].get("endpoint", ""): float(series["value"][1])
            for series in stack.prometheus.query(f"sum by (endpoint) (hbserver_http_requests{{job=\"{JOB}\"}})")
        }
        if all(counted.get(path, 0) >= report.by_path[path] for path in COUNTED_PATHS):
            return counted
        if time.monotonic() > deadline:
            return counted
        time.sleep(0.25)
