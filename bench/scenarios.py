"""What is measured: one :class:`Scenario` per URL and server configuration.

To add a scenario, append a ``Scenario(...)`` to :data:`SCENARIOS`; nothing else changes. Each
round starts a fresh hbserver (one worker, on the server CPU) for it, warms it up, measures it
with wrk and stops it. Examples::

    # POST with a JSON body (file relative to bench/); the Lua script is generated.
    Scenario("auction", "/openrtb2/auction", method="POST", body_file="payloads/auction.json",
             target_ratio=0.3)

    # A wrk script of your own (it sets method, body, headers; relative to bench/).
    Scenario("amp", "/openrtb2/amp?tag_id=t1", lua_script="scripts/amp.lua")

    # A custom configuration and mock bidders: the setup hook starts extra processes through the
    # context (they are stopped after the run) and returns placeholder values that are substituted
    # as {name} in the config strings and the path ({workdir} and {port} always exist).
    # mock_bidders(*options, seats=...) is such a hook: it starts bench/mocks/bidder.py and gives
    # {bidder_url} and, per seat, {<seat>_url} on a loopback address of its own.
    Scenario("auction", "/openrtb2/auction", method="POST", body_file="payloads/auction.json",
             config={"adapters": {"alpha": {"alias_of": "generic", "endpoint": "{bidder_url}/alpha"}}},
             setup=mock_bidders("--delay", "alpha=5"), target_ratio=0.08)

    # Judged by latency instead of (or as well as) throughput, with its own wrk connection count.
    Scenario("auction_timeout", ..., setup=mock_bidders("--hang", "gamma2"), p99_max_ms=220,
             connections=16)

    # The workers: 2 check: the same as amp_full with two workers, judged on CPU per request.
    Scenario("amp_full_w2", AMP_PATH, workers=2, cpu_within=("amp_full", 0.05), ...)

A scenario passes when every criterion it sets holds (``target_ratio`` on the median req/s
ratio to hello-world, ``target_cpu_ratio`` on the median CPU-time ratio to hello-world,
``p99_max_ms`` on the median p99, ``cpu_within`` on the median server CPU per request against
another scenario's); with none it is informational. A ``server="limit"`` scenario runs
bench/limit_server.py (the least a server can do with the same I/O) on the scenario's config; its
``limit_of`` names the scenarios whose CPU ratio it bounds, and the report prints them side by side.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from bench import procs
from bench.varied import has_tokens

BENCH_DIR = Path(__file__).resolve().parent
ServerKind = Literal["hbserver", "baseline", "limit"]
_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


class SetupContext:
    """What a scenario's setup hook may use. Processes it starts are stopped after the run.

    Extra processes go on the client CPU (the one wrk uses) unless told otherwise, so the
    server keeps its CPU to itself.
    """

    def __init__(self, workdir: Path, client_cpu: int | None) -> None:
        self.workdir = workdir
        self.client_cpu = client_cpu
        self.python = sys.executable
        self._processes: list[procs.ManagedProcess] = []
        self._cleanups: list[Callable[[], None]] = []

    def free_port(self) -> int:
        return procs.free_port()

    def start(
        self,
        name: str,
        argv: list[str],
        *,
        ready_url: str | None = None,
        env: Mapping[str, str] | None = None,
        pin: bool = True,
    ) -> procs.ManagedProcess:
        """Start a helper process (cwd: the run's directory); wait for ``ready_url`` to answer 2xx."""
        process = procs.start(
            name,
            argv,
            cwd=self.workdir,
            log_path=self.workdir / f"{name}.log",
            env=env,
            cpu=self.client_cpu if pin else None,
        )
        self._processes.append(process)
        if ready_url is not None:
            procs.wait_http_ready(ready_url, process)
        return process

    def add_cleanup(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` after the run (after the helper processes are stopped)."""
        self._cleanups.append(callback)

    def close(self) -> None:
        try:
            while self._processes:
                self._processes.pop().stop()
        finally:
            while self._cleanups:
                self._cleanups.pop()()


SetupHook = Callable[[SetupContext], Mapping[str, str]]


@dataclass(frozen=True)
class Scenario:
    """One measured URL on one server configuration."""

    name: str
    path: str  # path and query; may hold {placeholders}
    method: str = "GET"
    body_file: str | None = None  # request body (relative to bench/); a Lua script is generated
    content_type: str = "application/json"  # sent with body_file
    headers: Mapping[str, str] = field(default_factory=dict)
    lua_script: str | None = None  # a wrk script of your own (relative to bench/)
    config: Mapping[str, Any] | None = None  # hbserver YAML config; None = the embedded defaults
    env: Mapping[str, str] = field(default_factory=dict)  # extra environment for the server
    target_ratio: float | None = None  # minimum req/s relative to hello-world; None = not judged on it
    # minimum CPU-time ratio to hello-world (its CPU per request over this one's, median of rounds)
    target_cpu_ratio: float | None = None
    p99_max_ms: float | None = None  # maximum p99 latency (median over rounds); None = not judged on it
    connections: int | None = None  # wrk connections for this scenario; None = BENCH_CONNECTIONS
    setup: SetupHook | None = None  # extra processes and placeholder values, see the module doc
    server: ServerKind = "hbserver"
    ready_path: str = "/status"  # polled until 2xx before the warm-up
    description: str = ""
    workers: int = 1  # hbserver worker processes (all on the server CPU)
    # (scenario, tolerance): median server CPU per request within this fraction of that scenario's
    cpu_within: tuple[str, float] | None = None
    limit_of: tuple[str, ...] = ()  # for a limit server: the scenarios whose CPU ratio it bounds
    # (scenario, factor): median server CPU per request at most this factor times that scenario's
    cpu_at_most: tuple[str, float] | None = None

    def __post_init__(self) -> None:
        if not _NAME.fullmatch(self.name):
            raise ValueError(f"scenario name {self.name!r}: use lower-case letters, digits, '_' and '-'")
        if not self.path.startswith("/"):
            raise ValueError(f"scenario {self.name}: path must start with '/'")
        if self.method != self.method.upper():
            raise ValueError(f"scenario {self.name}: method must be upper-case")
        if self.lua_script is not None and (self.body_file is not None or self.method != "GET"):
            raise ValueError(f"scenario {self.name}: with lua_script, set the method and body in the script")
        if self.target_ratio is not None and self.target_ratio <= 0:
            raise ValueError(f"scenario {self.name}: target_ratio must be > 0")
        if self.target_cpu_ratio is not None and self.target_cpu_ratio <= 0:
            raise ValueError(f"scenario {self.name}: target_cpu_ratio must be > 0")
        if self.p99_max_ms is not None and self.p99_max_ms <= 0:
            raise ValueError(f"scenario {self.name}: p99_max_ms must be > 0")
        if self.connections is not None and self.connections < 1:
            raise ValueError(f"scenario {self.name}: connections must be >= 1")
        if self.server == "baseline" and (self.config is not None or self.setup is not None):
            raise ValueError(f"scenario {self.name}: the baseline server takes no config or setup")
        if self.server == "limit" and self.config is None:
            raise ValueError(f"scenario {self.name}: the limit server needs a config (bidders, stored requests)")
        if self.workers < 1 or (self.workers > 1 and self.server != "hbserver"):
            raise ValueError(f"scenario {self.name}: workers must be >= 1 (more than 1 only for hbserver)")
        if self.cpu_within is not None and (self.cpu_within[0] == self.name or not 0 < self.cpu_within[1] < 1):
            raise ValueError(f"scenario {self.name}: cpu_within is (another scenario, a fraction between 0 and 1)")
        if self.limit_of and self.server != "limit":
            raise ValueError(f"scenario {self.name}: only a limit server scenario bounds others (limit_of)")
        if self.cpu_at_most is not None and (self.cpu_at_most[0] == self.name or self.cpu_at_most[1] <= 0):
            raise ValueError(f"scenario {self.name}: cpu_at_most is (another scenario, a factor > 0)")
        if self.varied and self.lua_script is not None:
            raise ValueError(f"scenario {self.name}: a varied scenario's script is generated")

    @property
    def judged(self) -> bool:
        """Whether the scenario has a pass criterion (else it is informational)."""
        criteria = (self.target_ratio, self.target_cpu_ratio, self.p99_max_ms, self.cpu_within, self.cpu_at_most)
        return any(criterion is not None for criterion in criteria)

    @property
    def varied(self) -> bool:
        """Whether the path or body holds ``{{token}}``s (bench.varied): every request differs."""
        return has_tokens(self.path) or (self.body_file is not None and has_tokens(self.body_text()))

    def body_text(self) -> str:
        return _bench_path(self.body_file).read_text() if self.body_file is not None else ""

    def wrk_connections(self, default: int) -> int:
        return self.connections if self.connections is not None else default

    def url(self, port: int, values: Mapping[str, str]) -> str:
        return f"http://127.0.0.1:{port}{substitute(self.path, values)}"

    def write_config(self, workdir: Path, values: Mapping[str, str]) -> Path | None:
        """The config as a YAML file in ``workdir`` (placeholders substituted), or None."""
        if self.config is None:
            return None
        path = workdir / "hbserver.yaml"
        path.write_text(yaml.safe_dump(substitute(dict(self.config), values), sort_keys=False))
        return path

    def wrk_headers(self) -> list[str]:
        headers = dict(self.headers)
        if self.body_file is not None:
            headers.setdefault("Content-Type", self.content_type)
        return [f"{name}: {value}" for name, value in headers.items()]

    def wrk_script(self, workdir: Path) -> Path | None:
        """The wrk Lua script: the scenario's own, one generated for method and body, or None."""
        if self.lua_script is not None:
            return _bench_path(self.lua_script)
        if self.varied:
            body = lua_string(self.body_text()) if self.body_file is not None else "nil"
            lines = [
                f"-- generated for scenario {self.name}: every request its own (bench/varied.py)",
                f"local varied = dofile({lua_string(str(BENCH_DIR / 'scripts' / 'varied.lua'))})",
                f"varied.serve({lua_string(self.method)}, {lua_string(self.path)}, {body})",
            ]
            path = workdir / "request.lua"
            path.write_text("\n".join(lines) + "\n")
            return path
        if self.method == "GET" and self.body_file is None:
            return None
        lines = [f"-- generated for scenario {self.name}", f"wrk.method = {lua_string(self.method)}"]
        if self.body_file is not None:
            lines += [
                f"local f = assert(io.open({lua_string(str(_bench_path(self.body_file)))}, 'rb'))",
                "wrk.body = f:read('*a')",
                "f:close()",
            ]
        path = workdir / "request.lua"
        path.write_text("\n".join(lines) + "\n")
        return path


def _bench_path(name: str) -> Path:
    path = Path(name) if Path(name).is_absolute() else BENCH_DIR / name
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    return path


def lua_string(text: str) -> str:
    """``text`` as a double-quoted Lua string literal."""
    out = []
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif " " <= char <= "~":
            out.append(char)
        else:
            out.extend(f"\\{byte:03d}" for byte in char.encode())
    return '"' + "".join(out) + '"'


def substitute(value: Any, values: Mapping[str, str]) -> Any:
    """Replace {name} in every string of ``value`` (dicts and lists too); unknown names stay."""
    if isinstance(value, str):
        return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), value)
    if isinstance(value, Mapping):
        return {key: substitute(item, values) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [substitute(item, values) for item in value]
    return value


def mock_bidders(*options: str, seats: Sequence[str] = ()) -> SetupHook:
    """A setup hook starting bench/mocks/bidder.py with ``options``.

    It gives ``{bidder_url}`` (http://127.0.0.1:PORT) and, for the n-th of ``seats`` (from 1),
    ``{<seat>_url}`` = http://127.0.0.<n>:PORT/<seat>: one loopback host per seat, so each
    bidder gets its own connection pool in hbserver as distinct real bidders would.
    """
    if len(seats) > 254:
        raise ValueError("at most 254 seats")
    hosts = [f"127.0.0.{n}" for n in range(1, max(len(seats), 1) + 1)]

    def setup(ctx: SetupContext) -> dict[str, str]:
        port = ctx.free_port()
        argv = [ctx.python, str(BENCH_DIR / "mocks" / "bidder.py"), str(port), *options]
        argv += [arg for host in hosts for arg in ("--host", host)]
        ctx.start("mock-bidder", argv, ready_url=f"http://127.0.0.1:{port}/ready")
        values = {f"{seat}_url": f"http://127.0.0.{n}:{port}/{seat}" for n, seat in enumerate(seats, start=1)}
        return {"bidder_url": f"http://127.0.0.1:{port}", **values}

    return setup


# Three aliases of the OpenRTB pass-through adapter, all paths of the one mock bidder process, each
# with a Global Vendor List id of its own (used only when a request is in GDPR scope).
AUCTION_BIDDERS = ("alpha", "beta", "gamma2")
AUCTION_VENDOR_IDS: Mapping[str, int] = {"alpha": 32, "beta": 52, "gamma2": 76}
AUCTION_CONFIG: Mapping[str, Any] = {
    "adapters": {
        code: {"alias_of": "generic", "endpoint": f"{{{code}_url}}", "gvl_vendor_id": AUCTION_VENDOR_IDS[code]}
        for code in AUCTION_BIDDERS
    },
}
# The TCF v2 consent string of payloads/auction_gdpr.json (user.ext.consent, with regs.ext.gdpr = 1):
# consent to purposes 1-10, special features 1 and 2, and vendors 32, 52 and 76 (every bench bidder),
# so TCF enforcement lets all three bidders be called with everything. Built once with the tests'
# encoder: tests.privacy.tcf_encoder.CoreSegment(purposes=list(range(1, 11)), special_features=[1, 2],
# vendors=[32, 52, 76]).encode() (bench does not import tests; tests/test_bench_report.py checks it).
AUCTION_GDPR_CONSENT = "CPXegUAPXegUAAfKABENB-EsAP_AAAAAAAYgAmAAAAAEAABAAABAAAAA"
TIMEOUT_TMAX_MS = 200  # the tmax of payloads/auction_timeout.json
TIMEOUT_SLACK_MS = 20  # p99 may exceed tmax by this much


# AMP: the stored request the RTC callout names, with the three bidders on one 300x250 slot.
AMP_TAG = "amp-bench-300x250"
AMP_STORED_REQUEST = {
    "id": "amp-bench",
    "site": {"page": "https://news.bench.test/amp/article.html", "publisher": {"id": "1001"}},
    "imp": [{
        "id": "amp-slot",
        "banner": {"format": [{"w": 300, "h": 250}]},
        "ext": {"prebid": {"bidder": {code: {"slot": "amp"} for code in AUCTION_BIDDERS}}},
    }],
}
AMP_TIMEOUT_MS = 500  # the RTC timeout= of the AMP paths
AMP_P99_MAX_MS = 420  # issue 7: with a silent bidder, p99 <= 420 ms at timeout=500 (adjustment 100)
AMP_PATH = (
    f"/openrtb2/amp?tag_id={AMP_TAG}&w=300&h=250&ow=&oh=&ms=&slot=%2F1111%2Fbench&targeting=%7B%7D"
    f"&curl=https%3A%2F%2Fnews.bench.test%2Famp%2Farticle.html&timeout={AMP_TIMEOUT_MS}&account=1001"
    "&__amp_source_origin=https%3A%2F%2Fnews.bench.test"
)


# Real AMP traffic: every page its own curl (amp_varied), or 80 % of requests on 50 pages (amp_mixed).
AMP_CURL = "curl=https%3A%2F%2Fnews.bench.test%2Famp%2Farticle.html"
AMP_VARIED_PATH = AMP_PATH.replace(AMP_CURL, "curl=https%3A%2F%2Fnews.bench.test%2Famp%2F{{n}}.html")
AMP_MIXED_PATH = AMP_PATH.replace(AMP_CURL, "curl=https%3A%2F%2Fnews.bench.test%2Famp%2F{{page}}.html")


def amp_setup(*options: str) -> SetupHook:
    """Mock bidders (as :func:`mock_bidders`) and a stored-requests directory holding the AMP tag."""
    return combined(mock_bidders(*options, seats=AUCTION_BIDDERS), stored_amp_request(AMP_TAG, AMP_STORED_REQUEST))


AMP_CONFIG: Mapping[str, Any] = {
    **AUCTION_CONFIG,
    "stored_requests": {"filesystem": {"directorypath": "{stored_dir}"}},
}


def combined(*hooks: SetupHook) -> SetupHook:
    """One setup hook running ``hooks`` in order, their placeholder values merged."""

    def setup(ctx: SetupContext) -> dict[str, str]:
        values: dict[str, str] = {}
        for hook in hooks:
            values.update(hook(ctx))
        return values

    return setup


# Prebid's currency file, as a host fetches it (currency.fetch_url), from a loopback file server.
CURRENCY_FILE: Mapping[str, Any] = {
    "dataAsOf": "2026-01-01T00:00:00.000Z",
    "generatedAt": "2026-01-01T00:05:00.000Z",
    "conversions": {"USD": {"EUR": 0.9, "GBP": 0.78, "JPY": 150.0}, "GBP": {"USD": 1.28, "EUR": 1.15}},
}


def currency_server(ctx: SetupContext) -> dict[str, str]:
    """A setup hook serving :data:`CURRENCY_FILE` over HTTP on loopback; gives ``{currency_url}``."""
    directory = ctx.workdir / "currency"
    directory.mkdir(exist_ok=True)
    (directory / "latest.json").write_text(json.dumps(CURRENCY_FILE))
    port = ctx.free_port()
    argv = [ctx.python, "-m", "http.server", "--bind", "127.0.0.1", "--directory", str(directory), str(port)]
    url = f"http://127.0.0.1:{port}/latest.json"
    ctx.start("currency-server", argv, ready_url=url)
    return {"currency_url": url}


# Real traffic has the Global Vendor List fetched by version and a geo lookup on (issue 39): the judged
# varied scenarios run with both. The GVL server (loopback) serves payloads/gvl.json as every version a
# consent string names (bench.varied.TCF_BASE names 126), with version 100 as the fallback file; the
# geo database maps every IPv4 address bench.varied.ip() gives to a US state, so each auction looks
# its device up and no request moves into GDPR scope by country.
GVL_FALLBACK = BENCH_DIR / "payloads" / "gvl.json"
GVL_VERSIONS = (126,)
GEO_NETWORKS: Mapping[str, Mapping[str, Any]] = {
    "0.0.0.0/1": {"country": {"iso_code": "US"}, "subdivisions": [{"iso_code": "CA"}],
                  "location": {"latitude": 37.75, "longitude": -122.41, "metro_code": 807}},
    "128.0.0.0/1": {"country": {"iso_code": "US"}, "subdivisions": [{"iso_code": "NY"}],
                    "location": {"latitude": 40.71, "longitude": -74.0, "metro_code": 501}},
}  # fmt: skip


def gvl_server(ctx: SetupContext) -> dict[str, str]:
    """A setup hook serving the bench's vendor list as each of :data:`GVL_VERSIONS` (GVL v3 paths)
    on loopback; gives ``{gvl_template}`` (the ``http_endpoint_template``)."""
    directory = ctx.workdir / "gvl"
    directory.mkdir(exist_ok=True)
    base = json.loads(GVL_FALLBACK.read_text(encoding="utf-8"))
    for version in GVL_VERSIONS:
        (directory / f"vendor-list-v{version}.json").write_text(json.dumps({**base, "vendorListVersion": version}))
    port = ctx.free_port()
    argv = [ctx.python, "-m", "http.server", "--bind", "127.0.0.1", "--directory", str(directory), str(port)]
    ctx.start("gvl-server", argv, ready_url=f"http://127.0.0.1:{port}/vendor-list-v{GVL_VERSIONS[0]}.json")
    return {"gvl_template": f"http://127.0.0.1:{port}/vendor-list-v{{VERSION}}.json"}


def geo_database(ctx: SetupContext) -> dict[str, str]:
    """A setup hook writing a GeoIP2 City database of :data:`GEO_NETWORKS`; gives ``{geo_db}``."""
    from mmdb_writer import MMDBWriter  # a dev dependency, as the tests' databases
    from netaddr import IPSet

    writer = MMDBWriter(ip_version=6, ipv4_compatible=True, database_type="GeoIP2-City")
    for network, record in GEO_NETWORKS.items():
        writer.insert_network(IPSet([network]), dict(record))
    path = ctx.workdir / "city.mmdb"
    writer.to_db_file(str(path))
    return {"geo_db": str(path)}


REAL_TRAFFIC_SETUP = combined(gvl_server, geo_database)
REAL_TRAFFIC_CONFIG: Mapping[str, Any] = {
    "geolocation": {"database": "{geo_db}"},
    "gdpr": {"vendorlist_file": str(GVL_FALLBACK),
             "vendorlist": {"v2": {"http_endpoint_template": "{gvl_template}"},
                            "v3": {"http_endpoint_template": "{gvl_template}"}}},
}  # fmt: skip


def real_traffic(config: Mapping[str, Any], setup: SetupHook | None) -> tuple[Mapping[str, Any], SetupHook]:
    """A varied scenario's config and setup with the GVL fetched and the geo lookup on."""
    hooks = (setup, REAL_TRAFFIC_SETUP) if setup is not None else (REAL_TRAFFIC_SETUP,)
    return {**config, **REAL_TRAFFIC_CONFIG}, combined(*hooks)


# The full-feature scenarios (issue 22 item 4): what a realistic host has on, every feature of the
# money, privacy and validation issues at work. The request is in EUR and carries no rates, so the
# USD bids convert with the server's rates (fetched from currency_server at start-up, before the
# warm-up ends); price floors (mediaType|size rules, floorMin, enforcement) let alpha's and beta's
# bids through and reject gamma2's (test_bench_scenarios.py checks it against the mock's seat
# prices); GDPR applies with the TCF v2 consent string AUCTION_GDPR_CONSENT, enforced with a Global
# Vendor List (payloads/gvl.json: the three bidders' vendors, full enforce_algo) so every bidder is
# still called; US Privacy enforcement on; targeting (medium granularity, winners and bidder keys),
# bids cached and event URLs on (the account default, said explicitly).
FULL_RATE_EUR = 0.9  # CURRENCY_FILE's USD -> EUR
FULL_CONFIG: Mapping[str, Any] = {
    **AUCTION_CONFIG,
    "external_url": "https://hb.bench.test",
    "currency": {"fetch_url": "{currency_url}"},
    # the consent names version 126: no fetch of IAB's list (bench/payloads/gvl.json is what it is read against)
    "gdpr": {"enabled": True, "vendorlist_file": str(BENCH_DIR / "payloads" / "gvl.json"),
             "vendorlist": {"v2": {"http_endpoint_template": ""}, "v3": {"http_endpoint_template": ""}}},
    "ccpa": {"enforce": True},
    "price_floors": {"enabled": True},
    "account_defaults": {"events": {"enabled": True}, "price_floors": {"enabled": True}},
}
AMP_FULL_TAG = "amp-bench-full-300x250"
AMP_FULL_STORED_REQUEST: Mapping[str, Any] = {
    **AMP_STORED_REQUEST,  # the amp scenario's site and slot
    "id": "amp-bench-full",
    "cur": ["EUR"],
    "ext": {"prebid": {
        "targeting": {"pricegranularity": "medium", "includewinners": True, "includebidderkeys": True},
        "cache": {"bids": {}},
        "floors": {
            "floorMin": 0.05, "floorMinCur": "EUR", "currency": "EUR", "enforcement": {"enforcepbs": True},
            "data": {"floorProvider": "bench", "modelgroups": [{
                "modelWeight": 100, "modelVersion": "bench-amp-1", "currency": "EUR",
                "schema": {"fields": ["mediaType", "size"], "delimiter": "|"},
                "values": {"banner|300x250": 0.8, "banner|*": 0.7, "*|*": 0.6}, "default": 0.5,
            }]},
        },
    }},
}  # fmt: skip
AMP_FULL_PATH = (
    f"/openrtb2/amp?tag_id={AMP_FULL_TAG}&w=300&h=250&ow=&oh=&ms=&slot=%2F1111%2Fbench&targeting=%7B%7D"
    f"&curl=https%3A%2F%2Fnews.bench.test%2Famp%2Farticle.html&timeout={AMP_TIMEOUT_MS}&account=1001"
    f"&gdpr_applies=true&consent_string={AUCTION_GDPR_CONSENT}&consent_type=2"
    "&__amp_source_origin=https%3A%2F%2Fnews.bench.test"
)
AMP_FULL_CONFIG: Mapping[str, Any] = {
    **FULL_CONFIG,
    "stored_requests": {"filesystem": {"directorypath": "{stored_dir}"}},
}


def stored_amp_request(tag: str, stored_request: Mapping[str, Any]) -> SetupHook:
    """A setup hook writing a stored-requests directory with ``stored_request`` as ``tag``; gives ``{stored_dir}``."""

    def setup(ctx: SetupContext) -> dict[str, str]:
        stored = ctx.workdir / "stored" / "stored_requests"
        stored.mkdir(parents=True, exist_ok=True)
        (stored / f"{tag}.json").write_text(json.dumps(stored_request))
        return {"stored_dir": str(ctx.workdir / "stored")}

    return setup


AMP_FULL_SETUP = combined(
    mock_bidders(seats=AUCTION_BIDDERS), currency_server, stored_amp_request(AMP_FULL_TAG, AMP_FULL_STORED_REQUEST)
)


# The reference every ratio is computed against; it runs in every round whatever the filter.
HELLO = Scenario(
    name="hello",
    path="/hello",
    server="baseline",
    ready_path="/hello",
    description="bare aiohttp + uvloop hello-world (bench/baseline.py)",
)

AMP_MIXED_NOISE = 1.03  # amp_mixed's CPU per request at most this times amp_varied's
AMP_VARIED_SETUP = amp_setup()  # one hook for amp_varied and amp_varied_w2 (same set-up)

# The judged scenarios from issue 37 on: requests that vary as production traffic does (bench/varied.py).
# The fixed-request scenarios after them (the same request every time) are information: a memo keyed on
# request text always hits there, so they say what the hit path costs, not what production pays.
AUCTION_REAL_CONFIG, AUCTION_REAL_SETUP = real_traffic(AUCTION_CONFIG, mock_bidders(seats=AUCTION_BIDDERS))
AMP_REAL_CONFIG, AMP_REAL_SETUP = real_traffic(AMP_CONFIG, AMP_VARIED_SETUP)
# prebid.ortb2blocking on for every bidder (issue 41 item 4: at most 10 % over auction_varied): every
# attribute blocked and enforced, none matching the mock bidders' bids, so each bid is checked and kept.
ORTB2BLOCKING_ACCOUNT: Mapping[str, Any] = {"attributes": {
    "badv": {"blocked_adomain": ["blocked-advertiser.example", "other-blocked.example"], "enforce_blocks": True},
    "bcat": {"blocked_adv_cat": ["IAB25", "IAB26"], "enforce_blocks": True},
    "bapp": {"blocked_app": ["com.blocked.game"], "enforce_blocks": True},
    "btype": {"blocked_banner_type": [1, 4]},
    "battr": {"blocked_banner_attr": [1, 8, 9], "enforce_blocks": True},
}}  # fmt: skip
_ORTB2BLOCKING_GROUPS = {
    stage: {"groups": [{"timeout": 50, "hook_sequence": [
        {"module_code": "prebid.ortb2blocking", "hook_impl_code": f"ortb2blocking-{stage}"}]}]}
    for stage in ("bidder_request", "raw_bidder_response")
}  # fmt: skip
ORTB2BLOCKING_CONFIG: Mapping[str, Any] = {
    **AUCTION_REAL_CONFIG,
    "hooks": {
        "enabled": True,
        "modules": {"prebid": {"ortb2blocking": {"enabled": True}}},
        "host_execution_plan": {"endpoints": {"/openrtb2/auction": {"stages": _ORTB2BLOCKING_GROUPS}}},
    },
    "account_defaults": {"hooks": {"modules": {"prebid": {"ortb2blocking": ORTB2BLOCKING_ACCOUNT}}}},
}
COOKIE_SYNC_REAL_CONFIG, COOKIE_SYNC_REAL_SETUP = real_traffic({}, None)


def otlp_sink(ctx: SetupContext) -> dict[str, str]:
    """A setup hook starting bench/mocks/otlp_sink.py (an OTLP/HTTP receiver) on loopback; gives ``{otlp_url}``."""
    port = ctx.free_port()
    argv = [ctx.python, str(BENCH_DIR / "mocks" / "otlp_sink.py"), str(port)]
    ctx.start("otlp-sink", argv, ready_url=f"http://127.0.0.1:{port}/ready")
    return {"otlp_url": f"http://127.0.0.1:{port}/v1/traces"}


# Tracing on at 1 % head sampling (issue 46 item 6), spans exported to a loopback OTLP receiver: the figure
# the closing note gives beside auction_varied (tracing off, the default).
TRACED_CONFIG: Mapping[str, Any] = {
    **AUCTION_REAL_CONFIG,
    "tracing": {"enabled": True, "endpoint": "{otlp_url}", "sampler": "parentbased_traceidratio", "sampler_arg": 0.01},
}

VARIED_SCENARIOS: list[Scenario] = [
    Scenario(
        name="status",
        path="/status",
        target_cpu_ratio=round(1 / 1.05, 4),
        description="GET /status (a load balancer's health check), default config: at most 1.05x hello-world's CPU",
    ),
    Scenario(
        name="event_varied",
        path="/event?t=win&b=bid-{{n}}&a=acc-1&bidder=appnexus&f=b&ts={{n}}",
        target_cpu_ratio=round(1 / 1.05, 4),
        description="GET /event, every bid id its own: at most 1.05x hello-world's CPU",
    ),
    Scenario(
        name="setuid_varied",
        path="/setuid?bidder=appnexus&uid=bench-uid-{{n}}&gdpr=0&f=i",
        target_cpu_ratio=round(1 / 1.3, 4),
        description="GET /setuid with no cookie yet, every uid its own: at most 1.3x hello-world's CPU",
    ),
    Scenario(
        name="cookie_sync_varied",
        path="/cookie_sync",
        method="POST",
        body_file="payloads/cookie_sync_varied.json",
        content_type="text/plain",
        config=COOKIE_SYNC_REAL_CONFIG,
        setup=COOKIE_SYNC_REAL_SETUP,
        target_cpu_ratio=round(1 / 1.6, 4),
        description="POST /cookie_sync in GDPR scope, every user's TCF v2 string its own: at most 1.6x "
        "hello-world's CPU",
    ),
    Scenario(
        name="auction_varied",
        path="/openrtb2/auction",
        method="POST",
        body_file="payloads/auction_varied.json",
        content_type="text/plain",
        config=AUCTION_REAL_CONFIG,
        setup=AUCTION_REAL_SETUP,
        description="the auction scenario with id, site.page, device.ip, user.id, buyeruids and source.tid "
        "differing on every request",
    ),
    Scenario(
        name="auction_varied_ortb2blocking",
        path="/openrtb2/auction",
        method="POST",
        body_file="payloads/auction_varied.json",
        content_type="text/plain",
        config=ORTB2BLOCKING_CONFIG,
        setup=AUCTION_REAL_SETUP,
        cpu_at_most=("auction_varied", 1.10),
        description="auction_varied with the prebid.ortb2blocking module on for every bidder (both hooks, every "
        "attribute enforced): at most 1.10x auction_varied's CPU",
    ),
    Scenario(
        name="auction_varied_traced",
        path="/openrtb2/auction",
        method="POST",
        body_file="payloads/auction_varied.json",
        content_type="text/plain",
        config=TRACED_CONFIG,
        setup=combined(AUCTION_REAL_SETUP, otlp_sink),
        cpu_at_most=("auction_varied", 1.05),
        description="auction_varied with OpenTelemetry tracing on at 1 % sampling, spans sent to a loopback OTLP "
        "receiver: at most 1.05x auction_varied's CPU (the cost of tracing)",
    ),
    Scenario(
        name="amp_varied",
        path=AMP_VARIED_PATH,
        config=AMP_REAL_CONFIG,
        setup=AMP_REAL_SETUP,
        cpu_at_most=("auction_varied", 1.10),
        description="the amp scenario with a new page (curl) on every request: at most 1.10x auction_varied's CPU",
    ),
    Scenario(
        name="amp_mixed",
        path=AMP_MIXED_PATH,
        config=AMP_REAL_CONFIG,
        setup=AMP_REAL_SETUP,
        # no dearer than amp_varied; both run the same planned path (the page is spliced either way), so
        # 3 % is the run-to-run noise of two equal medians, not a cost allowed
        cpu_at_most=("amp_varied", AMP_MIXED_NOISE),
        description="the amp scenario with 80 % of requests on 50 pages and 20 % on new ones: no dearer than "
        "amp_varied (within the noise of equal costs)",
    ),
    Scenario(
        name="amp_varied_w2",
        path=AMP_VARIED_PATH,
        config=AMP_REAL_CONFIG,
        setup=AMP_REAL_SETUP,
        workers=2,
        cpu_within=("amp_varied", 0.05),
        description="amp_varied with workers: 2 on the server CPU (as amp_full_w2): each worker prepares and "
        "plans on its own, so its CPU per request must stay within 5 % of one worker's",
    ),
]

SCENARIOS: list[Scenario] = [
    *VARIED_SCENARIOS,
    Scenario(
        name="event",
        path="/event?t=win&b=bid-123&a=acc-1&bidder=appnexus&f=b&ts=1000",
        description="GET /event win notification, default config",
    ),
    Scenario(
        name="event_analytics",
        path="/event?t=win&b=bid-123&a=acc-1&bidder=appnexus&f=b&ts=1000",
        config={"analytics": {"file": {"filename": "{workdir}/analytics.log"}}},
        description="GET /event with the file analytics module writing every event",
    ),
    Scenario(
        name="setuid",
        path="/setuid?bidder=appnexus&uid=bench-uid-123456&gdpr=0&f=i",
        description="GET /setuid from a bidder redirect: new uids cookie and the pixel",
    ),
    Scenario(
        name="cookie_sync",
        path="/cookie_sync",
        method="POST",
        body_file="payloads/cookie_sync.json",
        content_type="text/plain",
        description="POST /cookie_sync as Prebid.js sends it: 3 bidders, limit 5",
    ),
    Scenario(
        name="vtrack",
        path="/vtrack?a=acc-1",
        method="POST",
        body_file="payloads/vtrack.json",
        content_type="application/json",
        description="POST /vtrack with one 5 KB VAST: tracker inserted, stored in the memory cache store",
    ),
    Scenario(
        name="auction",
        path="/openrtb2/auction",
        method="POST",
        body_file="payloads/auction.json",
        content_type="text/plain",
        config=AUCTION_CONFIG,
        setup=mock_bidders(seats=AUCTION_BIDDERS),
        description="POST /openrtb2/auction as Prebid.js sends it: 2 banner imps x 3 mock bidders, "
        "targeting, bids cached",
    ),
    Scenario(
        name="auction_gdpr",
        path="/openrtb2/auction",
        method="POST",
        body_file="payloads/auction_gdpr.json",
        content_type="text/plain",
        config=AUCTION_CONFIG,
        setup=mock_bidders(seats=AUCTION_BIDDERS),
        description="the auction with regs.ext.gdpr = 1 and a TCF v2 consent string (all purposes, every "
        "bidder's vendor): TCF enforced per bidder, all 3 bidders still called",
    ),
    Scenario(
        name="auction_floors",
        path="/openrtb2/auction",
        method="POST",
        body_file="payloads/auction_floors.json",
        content_type="text/plain",
        config=AUCTION_CONFIG,
        setup=mock_bidders(seats=AUCTION_BIDDERS),
        description="the auction in EUR with the request's rates and ext.prebid.floors (schema mediaType|size, "
        "floorMin, enforcement): floors resolved per imp, USD bids converted, gamma2's rejected below its floor",
    ),
    Scenario(
        name="auction_timeout",
        path="/openrtb2/auction",
        method="POST",
        body_file="payloads/auction_timeout.json",
        content_type="text/plain",
        config=AUCTION_CONFIG,
        setup=mock_bidders("--hang", "gamma2", seats=AUCTION_BIDDERS),
        p99_max_ms=TIMEOUT_TMAX_MS + TIMEOUT_SLACK_MS,
        connections=16,  # every auction waits ~tmax for gamma2: ~connections/tmax req/s
        description=f"the auction with gamma2 never answering: tmax {TIMEOUT_TMAX_MS} ms, "
        f"p99 must stay within tmax + {TIMEOUT_SLACK_MS} ms",
    ),
    Scenario(
        name="amp",
        path=AMP_PATH,
        config=AMP_CONFIG,
        setup=amp_setup(),
        description="GET /openrtb2/amp as the RTC callout sends it: stored request, 3 mock bidders, bids cached",
    ),
    Scenario(
        name="amp_timeout",
        path=AMP_PATH,
        config=AMP_CONFIG,
        setup=amp_setup("--hang", "gamma2"),
        p99_max_ms=AMP_P99_MAX_MS,
        connections=16,
        description=f"AMP with gamma2 never answering at timeout={AMP_TIMEOUT_MS}: p99 within {AMP_P99_MAX_MS} ms",
    ),
    Scenario(
        name="amp_full",
        path=AMP_FULL_PATH,
        config=AMP_FULL_CONFIG,
        setup=AMP_FULL_SETUP,
        description="AMP with every feature on: 3 mock bidders, stored request in EUR with floors (gamma2 "
        "rejected), server currency rates, GDPR with a TCF v2 consent string (GVL enforcement), targeting, "
        "bids cached, events",
    ),
    Scenario(
        name="amp_limit",
        path=AMP_PATH,
        server="limit",
        config=AMP_CONFIG,
        setup=amp_setup(),
        limit_of=("amp", "amp_full", "amp_full_w2"),
        description="the limit experiment: bench/limit_server.py with amp's I/O (query, stored request from a "
        "dict, 3 bidder calls over hbserver's bidder client, top bid, cache put, small JSON): the ceiling",
    ),
    Scenario(
        name="auction_full",
        path="/openrtb2/auction",
        method="POST",
        body_file="payloads/auction_full.json",
        content_type="text/plain",
        config=FULL_CONFIG,
        setup=combined(mock_bidders(seats=AUCTION_BIDDERS), currency_server),
        description="the auction with every feature on: 2 imps x 3 mock bidders in EUR with floors (gamma2 "
        "rejected), server currency rates, GDPR with a TCF v2 consent string (GVL enforcement), targeting, "
        "bids cached, events",
    ),
    Scenario(
        name="amp_full_w2",
        path=AMP_FULL_PATH,
        config=AMP_FULL_CONFIG,
        setup=AMP_FULL_SETUP,
        workers=2,
        description="amp_full with workers: 2, both pinned to the server CPU (forked workers inherit the "
        "supervisor's affinity); CPU summed over the supervisor and its workers. With one server CPU the "
        "two workers share amp_full's load and CPU, each doing half: per-worker load at the same total is "
        "what one CPU allows (two CPUs for the server would leave none for wrk and the mocks), so the CPU "
        "per request compares like for like and shows what a second worker costs",
    ),
]


def select(names: str | None) -> list[Scenario]:
    """The scenarios named in a comma list (all when empty); raises ValueError on an unknown name."""
    wanted = [name.strip() for name in (names or "").split(",") if name.strip()]
    if not wanted:
        return list(SCENARIOS)
    known = {scenario.name: scenario for scenario in SCENARIOS}
    unknown = [name for name in wanted if name not in known and name != HELLO.name]
    if unknown:
        raise ValueError(
            f"BENCH_SCENARIOS: unknown scenario(s) {', '.join(unknown)}; known: {', '.join(known)}"
        )
    return [scenario for scenario in SCENARIOS if scenario.name in wanted]
