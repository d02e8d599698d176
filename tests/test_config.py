"""Configuration: defaults, sources and their precedence, and one line per problem."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from hbserver.cli import startup_warnings
from hbserver.config import REDACTED, AdapterConfig, Config, ConfigError, deep_merge, load_config, redact, to_plain
from hbserver.cpus import usable_cpus
from tests.conftest import make_config

CONTRACT = Path(__file__).resolve().parents[2] / "shared" / "spec" / "CONTRACT.md"


def flatten(tree: dict, prefix: str = "") -> dict:
    out = {}
    for key, value in tree.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value and key not in ("allowactivities",):
            out.update(flatten(value, path + "."))
        else:
            out[path] = value
    return out


DEFAULTS = [
    ("host", "0.0.0.0"),
    ("port", 8000),
    ("workers", 1),
    ("external_url", "http://localhost:8000"),
    ("max_request_size", 262144),
    ("shutdown_timeout_seconds", 10),
    ("status_response", ""),
    ("host_cookie.ttl_days", 90),
    ("host_cookie.max_cookie_size_bytes", 0),
    ("gdpr.enabled", True),
    ("gdpr.default_value", "0"),
    ("ccpa.enforce", False),
    ("user_sync.coop_sync.default", False),
    ("stored_requests.filesystem.enabled", True),
    ("stored_requests.filesystem.directorypath", "./stored_requests/data/by_id"),
    ("stored_requests.database.poll_for_updates.refresh_rate_seconds", 30),
    ("stored_requests.in_memory_cache.type", "lru"),
    ("stored_requests.in_memory_cache.size", 10000),
    ("stored_requests.in_memory_cache.ttl_seconds", 300),
    ("account_required", False),
    ("account_defaults.events.enabled", True),
    ("account_defaults.cookie_sync.default_coop_sync", None),
    ("cache.store", "memory"),
    ("cache.memory.max_bytes", 268435456),
    ("cache.redis.url", "redis://127.0.0.1:6379/0"),
    ("cache.redis.cluster.nodes", []),
    ("cache.default_ttl_seconds", 300),
    ("cache.max_ttl_seconds", 3600),
    ("cache.max_value_bytes", 262144),
    ("cache.max_num_values", 10),
    ("cache.serve_endpoint", True),
    ("cache.expected_millis", 10),
    ("auction_timeouts_ms.default", 1000),
    ("auction_timeouts_ms.max", 5000),
    ("amp.default_timeout_ms", 1000),
    ("amp.timeout_adjustment_ms", 100),
    ("analytics.file.filename", ""),
    ("metrics.prometheus.enabled", True),
    ("metrics.prometheus.path", "/metrics"),
    ("metrics.prometheus.namespace", "hbserver"),
    ("metrics.prometheus.subsystem", ""),
    ("shutdown_drain_seconds", 0),
    ("http_timeouts.header_seconds", 10),
    ("http_timeouts.body_seconds", 30),
    ("http_timeouts.idle_seconds", 60),
    ("admin.port", 0),
    ("logging.level", "info"),
    ("logging.access.sample_rate", 0.0),
    ("currency.fetch_url", ""),
    ("currency.fetch_interval_seconds", 1800),
    ("currency.stale_rates_seconds", 86400),
    ("analytics.http.endpoint", ""),
    ("analytics.http.batch_size", 500),
    ("analytics.http.flush_interval_seconds", 5),
    ("analytics.http.buffer_size", 10000),
]


@pytest.mark.parametrize(("key", "expected"), DEFAULTS)
def test_default(key, expected):
    assert flatten(to_plain(load_config(environ={})))[key] == expected


def contract_defaults() -> dict:
    text = CONTRACT.read_text()
    block = re.search(r"## 2\. Configuration.*?```yaml\n(.*?)```", text, re.S).group(1)
    tree = yaml.safe_load(block.replace("<code>:", "example_code:"))
    adapter = tree.pop("adapters")["example_code"]
    return {"config": tree, "adapter": adapter}


# Per-adapter keys hbserver adds to the contract's (PBS-Go names): Rubicon's XAPI credentials, the
# partner id and app secret (audienceNetwork).
ADAPTER_EXTENSIONS = ("xapi.username", "xapi.password", "xapi.tracker", "platform_id", "app_secret",
                      "tmax_deduction_ms")
# Keys hbserver adds to the contract's, each with PBS-Go's (or, for privacy.modules, PBS-Java's) name
# and documented in the README: TCF enforcement (host and account), LMT, the host schain node,
# account CCPA switches, IP masking bits and privacy modules; and the Redis Cluster seed nodes (after
# Prebid Cache Java's spring.redis.cluster.nodes). Prefixes of the flattened keys.
# Keys beyond the contract named whole (a prefix would also take contract keys it begins).
EXACT_EXTENSIONS = (
    "account_defaults.cookie_sync.pri",  # PBS-Java's cookie_sync.pri
    "analytics.file.format",  # hbserver's records or PBS-Go's file logger objects (issue 46)
)
CONFIG_EXTENSIONS = (
    "gdpr.non_standard_publishers",
    "gdpr.eea_countries",
    "stored_requests.database.connection.",  # PBS-Go's: driver (mysql, postgres), dbname, host, port, user, password
    "stored_requests.database.fetcher.",  # PBS-Go's: query, amp_query ($REQUEST_ID_LIST, $IMP_ID_LIST)
    "stored_requests.database.poll_for_updates.timeout_ms",  # PBS-Go's
    "stored_requests.database.poll_for_updates.query",  # PBS-Go's: query, amp_query ($LAST_UPDATED)
    "stored_requests.database.poll_for_updates.amp_query",
    "gdpr.tcf2.",
    "gdpr.vendorlist.",  # PBS-Java's gdpr.vendorlist (v2/v3 http-endpoint-template, ...), snake_case
    "lmt.",
    "host_schain_node.",
    "account_defaults.gdpr.",
    "account_defaults.ccpa.",
    "account_defaults.privacy.ipv4.",
    "account_defaults.privacy.ipv6.",
    "account_defaults.privacy.modules",
    "account_defaults.privacy.privacysandbox.",  # PBS-Go's Privacy Sandbox switches (Topics, cookie deprecation)
    "account_defaults.privacy.dsa.",  # PBS-Go's account DSA default (default, gdpr_only)
    "price_floors.",
    "auto_gen_source_tid",
    "account_defaults.price_floors.",
    "account_defaults.alternatebiddercodes",
    "account_defaults.bidadjustments",
    "account_defaults.default_bid_limit",
    "cache.redis.cluster.",
    "overload.",  # hbserver's own (Prebid Server sheds no load): overload.max_wait_ms
    "stored_requests.http_events.",  # PBS-Go's: endpoint, amp_endpoint, refresh_rate_seconds, timeout_ms
    "admin_endpoints.",  # PBS-Java's admin-endpoints: storedrequest, storedrequest_amp, cache_invalidation
    "geolocation.",  # PBS-Java's geolocation, here a local MaxMind file: geolocation.database
    "account_defaults.privacy.geo.",  # hbserver's own: privacy.geo.precise_geo_blocked_states
    "datacenter",  # PBS-Go's: the data center named in ext.prebid.server
    "generate_bid_id",  # PBS-Go's: a UUID per bid in ext.prebid.bidid
    "hooks.",  # PBS-Go's hooks: enabled, modules, host_execution_plan, default_account_execution_plan
    "account_defaults.hooks.",  # PBS-Go's account hooks: execution_plan, modules
    "host_cookie.number_of_uid_cookies",  # PBS-Java's setuid.number-of-uid-cookies
    "host_cookie.size_threshold_bytes",  # hbserver's own (PBS issue #4505): uids_cookie_size_over_threshold
    "validations.",  # PBS-Go's bid validations (and hbserver's adm_or_nurl, media_type, vast_protocol)
    "account_defaults.validations.",  # PBS-Go's account validations (each overrides the host's)
    "blocked_apps",  # PBS-Go's: app ids refused with 503
    "compression.",  # PBS-Go's: request.enable_gzip, response.enable_gzip
    "debug.",  # PBS-Go's: override_token (X-Pbs-Debug-Override)
    "default_request.",  # PBS-Go's: type, file.name, alias_info
    "tmax_adjustments.",  # PBS-Go's: enabled and its three durations
    "video.",  # PBS-Go's: enable_deprecated_endpoint (/openrtb2/video)
    "video_stored_request_required",  # PBS-Go's
    "stored_video_req.",  # PBS-Go's: filesystem.enabled, filesystem.directorypath
    "request_validation.",  # PBS-Go's: ipv4_private_networks, ipv6_private_networks (the client IP)
    "auction.",  # PBS-Java's: biddertmax (min, max, percent), tmax_upstream_response_time
    "account_defaults.auction.",  # PBS-Java's account auction: impression_limit, secondary_bidders
    # the account keys issue 42 item 1 honours (README, Account settings)
    "account_defaults.analytics.",  # PBS-Java's analytics.auction_events
    "account_defaults.bid_rounding",
    "account_defaults.cache_ttl.",
    "account_defaults.cookie_sync.disabled_iframe_bidders",
    "account_defaults.default_integration",
    "account_defaults.events.default_url",
    "account_defaults.events.vast_events",
    "account_defaults.preferredmediatype",
    "account_defaults.targeting_prefix",
    "account_defaults.truncate_target_attr",
    "account_defaults.vtrack.",  # PBS-Java's vtrack.ttl
    "tracing.",  # hbserver's own OpenTelemetry section (issue 46 item 6), keys after OTel's env variables
    "analytics.pubstack.",  # PBS-Go's pubstack analytics module (issue 46)
    "analytics.agma.",  # PBS-Go's agma analytics module (issue 46)
    "analytics.account_http.",  # hbserver's own: bounds of the accounts' own collectors (issue 46 item 5)
    "account_defaults.settings.",  # PBS-Java's settings.geo_lookup
)


@pytest.mark.skipif(not CONTRACT.exists(), reason="../shared/spec/CONTRACT.md is not beside this checkout")
def test_every_contract_key_and_default_matches():
    contract = contract_defaults()
    ours = to_plain(Config())
    ours.pop("adapters")
    flat = {k: v for k, v in flatten(ours).items() if not k.startswith(CONFIG_EXTENSIONS) and k not in EXACT_EXTENSIONS}
    assert flat == flatten(contract["config"])
    adapter = flatten(to_plain(AdapterConfig()))
    for key in ADAPTER_EXTENSIONS:  # keys beyond the contract, documented in the README
        adapter.pop(key)
    assert adapter == flatten(contract["adapter"])


def test_yaml_then_env_then_flags(tmp_path):
    path = tmp_path / "hbs.yaml"
    path.write_text("port: 7000\nhost: 127.0.0.1\nhost_cookie:\n  domain: file.example\n  ttl_days: 30\n")
    env = {"HBS_PORT": "9000", "HBS_HOST_COOKIE__DOMAIN": "example.com", "OTHER": "ignored"}
    config = load_config(str(path), env, {"port": 9100, "workers": None})
    assert config.port == 9100  # flag beats environment
    assert config.host == "127.0.0.1"  # file value kept
    assert config.host_cookie.domain == "example.com"  # environment beats file
    assert config.host_cookie.ttl_days == 30
    assert config.workers == 1  # an absent flag changes nothing


@pytest.mark.parametrize(
    ("env", "key", "expected"),
    [
        ({"HBS_CACHE__STORE": "redis"}, ("cache", "store"), "redis"),
        ({"HBS_GDPR__ENABLED": "false"}, ("gdpr", "enabled"), False),
        ({"HBS_GDPR__DEFAULT_VALUE": "1"}, ("gdpr", "default_value"), "1"),
        ({"HBS_STATUS_RESPONSE": '"ok"'}, ("status_response",), "ok"),
        ({"HBS_SHUTDOWN_TIMEOUT_SECONDS": "2.5"}, ("shutdown_timeout_seconds",), 2.5),
        ({"HBS_USER_SYNC__PRIORITY_GROUPS": "[[a, b], [c]]"}, ("user_sync", "priority_groups"), [["a", "b"], ["c"]]),
        ({"HBS_ADAPTERS__ALPHA__ALIAS_OF": "generic", "HBS_ADAPTERS__ALPHA__ENDPOINT": "http://127.0.0.1:1/x"},
         ("adapters", "alpha", "endpoint"), "http://127.0.0.1:1/x"),
        ({"HBS_ADAPTERS__APPNEXUS__OPENRTB_VERSION": "2.6"}, ("adapters", "appnexus", "openrtb_version"), "2.6"),
        ({"HBS_CACHE__REDIS__CLUSTER__NODES": "[10.0.0.1:7000, redis-1.redis:7001, '[fd00::1]:7002']"},
         ("cache", "redis", "cluster", "nodes"), ["10.0.0.1:7000", "redis-1.redis:7001", "[fd00::1]:7002"]),
    ],
)
def test_environment_values_are_yaml_scalars(env, key, expected):
    node = to_plain(load_config(environ=env))
    for part in key:
        node = node[part]
    assert node == expected


PROBLEMS = [
    ({"port": "abc"}, "port: must be an integer, got str 'abc'"),
    ({"port": 70000}, "port: must be a port number 0-65535, got 70000"),
    ({"workers": -1}, "workers: must be >= 0, got -1"),
    ({"colour": "blue"}, "colour: unknown key"),
    ({"cache": {"stor": "redis"}}, "cache.stor: unknown key"),
    ({"cache": {"store": "disk"}}, "cache.store: must be one of memory, redis, remote; got 'disk'"),
    ({"cache": {"store": "remote"}}, "cache.remote.url: required when cache.store is remote"),
    ({"external_url": "localhost"}, "external_url: not a URL: 'localhost'"),
    ({"adapters": {"alpha": {"alias_of": "generic", "endpoint": "ftp//x"}}},
     "adapters.alpha.endpoint: not a URL: 'ftp//x'"),
    ({"adapters": {"alpha": {"endpoint": "http://x.example"}}},
     "adapters.alpha: unknown bidder; a code that is not built in needs alias_of"),
    ({"adapters": {"alpha": {"alias_of": "nobody"}}}, "adapters.alpha.alias_of: unknown built-in adapter 'nobody'"),
    ({"adapters": {"alpha": {"alias_of": "generic", "openrtb_version": "3.0"}}},
     "adapters.alpha.openrtb_version: must be one of 2.5, 2.6; got '3.0'"),
    ({"host_cookie": {"max_cookie_size_bytes": 100}},
     "host_cookie.max_cookie_size_bytes: must be 0 (unlimited) or >= 500, got 100"),
    ({"host_cookie": {"number_of_uid_cookies": 0}},
     "host_cookie.number_of_uid_cookies: must be between 1 and 30, got 0"),
    ({"host_cookie": {"number_of_uid_cookies": 31}},
     "host_cookie.number_of_uid_cookies: must be between 1 and 30, got 31"),
    ({"host_cookie": {"size_threshold_bytes": -1}}, "host_cookie.size_threshold_bytes: must be >= 0, got -1"),
    ({"gdpr": {"enabled": "yes"}}, "gdpr.enabled: must be a boolean (true/false), got str 'yes'"),
    ({"gdpr": "on"}, "gdpr: must be a mapping, got str 'on'"),
    ({"metrics": {"prometheus": {"namespace": "hb-server"}}},
     "metrics.prometheus.namespace: not a valid Prometheus name: 'hb-server'"),
    ({"metrics": {"prometheus": {"path": "metrics"}}},
     "metrics.prometheus.path: must be a path starting with '/': 'metrics'"),
    ({"auction_timeouts_ms": {"default": 6000}},
     "auction_timeouts_ms.default: must not exceed auction_timeouts_ms.max (6000 > 5000)"),
    ({"user_sync": {"priority_groups": "appnexus"}}, "user_sync.priority_groups: must be a list, got str 'appnexus'"),
    ({"account_defaults": {"privacy": {"allowactivities": {"syncUser": {"default": "no"}}}}},
     "account_defaults.privacy.allowactivities: "),
    ({"stored_requests": {"database": {"dsn": "mysql://x/y"}}},
     "stored_requests.database.dsn: not a URL: 'mysql://x/y'"),
    ({"stored_requests": {"database": {"connection": {"driver": "oracle"}}}},
     "stored_requests.database.connection.driver: must be one of , mysql, postgres; got 'oracle'"),
    ({"stored_requests": {"database": {"connection": {"driver": "mysql", "dbname": "x", "port": 70000}}}},
     "stored_requests.database.connection.port: must be a port number 0-65535, got 70000"),
    ({"stored_requests": {"database": {"connection": {"driver": "mysql"}}}},
     "stored_requests.database.connection.dbname: required when connection.driver is set"),
    ({"stored_requests": {"database": {"connection": {"dbname": "pbs"}}}},
     "stored_requests.database.connection.driver: must be mysql or postgres when connection.dbname is set"),
    ({"stored_requests": {"database": {"dsn": "postgresql://h/db", "connection": {"driver": "mysql", "dbname": "x"}}}},
     "stored_requests.database.dsn: give either dsn or connection.driver and connection.dbname, not both"),
    ({"stored_requests": {"database": {"fetcher": {"query": "SELECT 1 WHERE id IN $REQUEST_ID_LIST"}}}},
     "stored_requests.database.fetcher.query: needs a database (dsn, or connection.driver and connection.dbname)"),
    ({"stored_requests": {"database": {"dsn": "postgresql://h/db", "fetcher": {"amp_query": "SELECT 1"}}}},
     "stored_requests.database.fetcher.amp_query: must contain $REQUEST_ID_LIST or $IMP_ID_LIST"),
    ({"stored_requests": {"database": {"dsn": "postgresql://h/db", "poll_for_updates": {"query": "SELECT 1"}}}},
     "stored_requests.database.poll_for_updates.query: must contain the $LAST_UPDATED parameter"),
    ({"stored_requests": {"database": {"poll_for_updates": {"timeout_ms": -1}}}},
     "stored_requests.database.poll_for_updates.timeout_ms: must be >= 0, got -1"),
    ({"shutdown_drain_seconds": -1}, "shutdown_drain_seconds: must be >= 0, got -1"),
    ({"http_timeouts": {"header_seconds": 0}}, "http_timeouts.header_seconds: must be > 0, got 0"),
    ({"http_timeouts": {"idle_seconds": "long"}}, "http_timeouts.idle_seconds: must be a number, got str 'long'"),
    ({"admin": {"port": 70000}}, "admin.port: must be a port number 0-65535, got 70000"),
    ({"admin": {"port": 8000}}, "admin.port: must differ from port (8000); 0 keeps the admin endpoints on it"),
    ({"logging": {"level": "verbose"}}, "logging.level: must be one of debug, info, warning, error; got 'verbose'"),
    ({"logging": {"access": {"sample_rate": 1.5}}}, "logging.access.sample_rate: must be between 0 and 1, got 1.5"),
    ({"currency": {"fetch_url": "file:///rates.json"}}, "currency.fetch_url: not a URL: 'file:///rates.json'"),
    ({"currency": {"fetch_interval_seconds": 0}}, "currency.fetch_interval_seconds: must be >= 1, got 0"),
    ({"currency": {"stale_rates_seconds": 0}}, "currency.stale_rates_seconds: must be >= 1, got 0"),
    ({"analytics": {"http": {"endpoint": "collector:9000"}}},
     "analytics.http.endpoint: not a URL: 'collector:9000'"),
    ({"analytics": {"http": {"batch_size": 0}}}, "analytics.http.batch_size: must be >= 1, got 0"),
    ({"analytics": {"http": {"flush_interval_seconds": 0}}},
     "analytics.http.flush_interval_seconds: must be > 0, got 0"),
    ({"analytics": {"http": {"buffer_size": 100}}},
     "analytics.http.buffer_size: must be at least analytics.http.batch_size (100 < 500)"),
    ({"analytics": {"account_http": {"max_collectors": 0}}},
     "analytics.account_http.max_collectors: must be >= 1, got 0"),
    ({"analytics": {"account_http": {"max_queue_bytes": 10}}},
     "analytics.account_http.max_queue_bytes: must be >= 1024, got 10"),
    ({"analytics": {"account_http": {"max_batch_size": 0}}},
     "analytics.account_http.max_batch_size: must be >= 1, got 0"),
    ({"analytics": {"account_http": {"max_batch_bytes": 100}}},
     "analytics.account_http.max_batch_bytes: must be >= 1024, got 100"),
    ({"analytics": {"account_http": {"timeout_ms": 0}}}, "analytics.account_http.timeout_ms: must be >= 1, got 0"),
    ({"account_defaults": {"analytics": {"http": {"url": "ftp://collector/x"}}}},
     "account_defaults.analytics.http.url: not a URL: 'ftp://collector/x'"),
    ({"account_defaults": {"analytics": {"http": {"sampling_rate": 2}}}},
     "account_defaults.analytics.http.sampling_rate: must be between 0 and 1, got 2"),
    ({"metrics": {"prometheus": {"subsystem": "pbs server"}}},
     "metrics.prometheus.subsystem: not a valid Prometheus name: 'pbs server'"),
    ({"cache": {"redis": {"cluster": {"nodes": ["10.0.0.1:7000", "redis-2"]}}}},
     "cache.redis.cluster.nodes: not host:port: 'redis-2'"),
    ({"cache": {"redis": {"cluster": {"nodes": ["10.0.0.1:0"]}}}},
     "cache.redis.cluster.nodes: port must be 1-65535: '10.0.0.1:0'"),
    # issue 38: "²" passes str.isdigit() (int() refuses it); int() refuses 5,000 digits
    ({"cache": {"redis": {"cluster": {"nodes": ["10.0.0.1:\u00b2"]}}}},
     "cache.redis.cluster.nodes: not host:port: '10.0.0.1:\u00b2'"),
    ({"cache": {"redis": {"cluster": {"nodes": ["10.0.0.1:" + "7" * 5000]}}}},
     "cache.redis.cluster.nodes: port must be 1-65535: '10.0.0.1:" + "7" * 5000 + "'"),
    ({"cache": {"redis": {"cluster": {"nodes": ["fd00::1:7000"]}}}},
     "cache.redis.cluster.nodes: an IPv6 address needs brackets, as in [::1]:7000: 'fd00::1:7000'"),
    ({"cache": {"redis": {"cluster": {"nodes": "10.0.0.1:7000,10.0.0.2:7000"}}}},
     "cache.redis.cluster.nodes: must be a list, got str '10.0.0.1:7000,10.0.0.2:7000'"),
    ({"cache": {"redis": {"url": "redis://10.0.0.1:6379/2", "cluster": {"nodes": ["10.0.0.1:7000"]}}}},
     "cache.redis.url: a Redis Cluster has only database 0, got '2' (cache.redis.cluster.nodes is set)"),
    ({"cache": {"redis": {"url": "unix:///run/redis.sock", "cluster": {"nodes": ["10.0.0.1:7000"]}}}},
     "cache.redis.url: a unix socket cannot reach a Redis Cluster (cache.redis.cluster.nodes is set)"),
]


@pytest.mark.parametrize(("raw", "problem"), PROBLEMS)
def test_each_problem_names_its_key(raw, problem):
    with pytest.raises(ConfigError) as caught:
        load_config(environ={}, overrides=raw)
    [found] = caught.value.problems
    assert found == problem or (problem.endswith(": ") and found.startswith(problem))


def test_all_problems_are_reported_together():
    with pytest.raises(ConfigError) as caught:
        load_config(environ={"HBS_PORTT": "1", "HBS_WORKERS": "many"}, overrides={"cache": {"max_num_values": 0}})
    assert sorted(caught.value.problems) == [
        "HBS_PORTT: not a configuration key",
        "cache.max_num_values: must be >= 1, got 0",
        "workers: must be an integer, got str 'many'",
    ]


HINT = ("looks like a Kubernetes service link (from a Service named 'hbs'); set enableServiceLinks: false "
        "in the pod spec or rename the Service")


@pytest.mark.parametrize(
    ("env", "problems"),
    [
        ({"HBS_COLOUR": "blue"}, ["HBS_COLOUR: not a configuration key"]),
        ({"HBS_CACHE__STOR": "redis"}, ["HBS_CACHE__STOR: not a configuration key"]),
        ({"HBS_PORT__X": "1"}, ["HBS_PORT__X: not a configuration key"]),  # below a scalar
        ({"HBS_CACHE____STORE": "redis"}, ["HBS_CACHE____STORE: not a configuration key"]),
        ({"HBS_PORT": "tcp://10.0.0.11:8000"}, [f"HBS_PORT: 'tcp://10.0.0.11:8000' {HINT}"]),
        ({"HBS_PORT_8000_TCP": "tcp://10.0.0.11:8000"}, [f"HBS_PORT_8000_TCP: 'tcp://10.0.0.11:8000' {HINT}"]),
        ({"HBS_SERVICE_HOST": "10.0.0.11", "HBS_SERVICE_PORT": "8000", "HBS_PORT_8000_TCP_ADDR": "10.0.0.11",
          "HBS_PORT_8000_TCP_PROTO": "tcp"},
         [f"{name}: not a configuration key; it {HINT}" for name in
          ("HBS_PORT_8000_TCP_ADDR", "HBS_PORT_8000_TCP_PROTO", "HBS_SERVICE_HOST", "HBS_SERVICE_PORT")]),
        ({"HBS_ADAPTERS__ALPHA__ALIAS_OF": "generic", "HBS_ADAPTERS__ALPHA__GVL_VENDOR_ID": "7"}, []),
        ({"HBS_ACCOUNT_DEFAULTS__PRIVACY__ALLOWACTIVITIES__SYNCUSER": "{default: true}"}, []),  # free-form
        ({"HBS_CACHE__REDIS__URL": "redis://10.0.0.12:6379/0", "HBS_PORT": "9000"}, []),
    ],
    ids=["unknown", "unknown-nested", "below-scalar", "empty-level", "service-link-port", "service-link-value",
         "service-link-names", "adapter-code", "free-form", "ordinary"],
)
def test_environment_variables_that_name_no_key(env, problems):
    if problems:
        with pytest.raises(ConfigError) as caught:
            load_config(environ=env)
        assert caught.value.problems == problems
    else:
        load_config(environ=env)


def run_cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "hbserver", *args], capture_output=True, text=True, timeout=60,
        env={"PATH": "/usr/bin:/bin", **(env or {})},
    )


def test_check_config_prints_effective_yaml(tmp_path):
    path = tmp_path / "hbs.yaml"
    path.write_text("status_response: ok\n")
    done = run_cli("--config", str(path), "--check-config", "--port", "9001", env={"HBS_WORKERS": "3"})
    assert done.returncode == 0, done.stderr
    effective = yaml.safe_load(done.stdout)
    assert (effective["status_response"], effective["port"], effective["workers"]) == ("ok", 9001, 3)
    assert effective == to_plain(load_config(str(path), {"HBS_WORKERS": "3"}, {"port": 9001}))


@pytest.mark.parametrize("check", [["--check-config"], []])
def test_invalid_configuration_exits_2_with_one_line_per_problem(tmp_path, check):
    path = tmp_path / "hbs.yaml"
    path.write_text("adapters:\n  alpha:\n    alias_of: generic\n    endpoint: ftp//x\ncache: {store: disk}\n")
    done = run_cli("--config", str(path), *check, env={"HBS_NOPE": "1"})
    assert done.returncode == 2
    assert done.stdout == ""
    assert sorted(done.stderr.splitlines()) == [
        "HBS_NOPE: not a configuration key",
        "adapters.alpha.endpoint: not a URL: 'ftp//x'",
        "cache.store: must be one of memory, redis, remote; got 'disk'",
    ]


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (": : :", "is not valid YAML"),
        ("- a\n- b\n", "must hold a mapping at the top level"),
    ],
)
def test_unreadable_config_file(tmp_path, content, problem):
    path = tmp_path / "hbs.yaml"
    path.write_text(content)
    done = run_cli("--config", str(path), "--check-config")
    assert done.returncode == 2
    assert done.stderr.startswith("--config: ") and problem in done.stderr


def test_missing_config_file():
    done = run_cli("--config", "/nonexistent/hbs.yaml", "--check-config")
    assert done.returncode == 2
    assert done.stderr == "--config: cannot read /nonexistent/hbs.yaml: No such file or directory\n"


def test_unopenable_analytics_file_is_a_config_problem(tmp_path):
    done = run_cli("--check-config", env={"HBS_ANALYTICS__FILE__FILENAME": str(tmp_path / "no" / "x.jsonl")})
    assert done.returncode == 2
    assert done.stderr.startswith("analytics.file.filename: cannot open ")


@pytest.mark.parametrize(
    ("env", "problem"),
    [
        ({"HBS_ADAPTERS__ADF__USERSYNC__REDIRECT__URL": "https://x.example/{{.Bad}}"},
         "adapters.adf.usersync.redirect.url: unknown macro {{.Bad}}"),
        ({"HBS_USER_SYNC__REDIRECT_URL": "{{.ExternalURL}}/setuid?b={{.Nope}}"},
         "user_sync.redirect_url: unknown macro {{.Nope}}"),
        ({"HBS_GDPR__VENDORLIST_FILE": "/nonexistent/gvl.json"}, "gdpr.vendorlist_file: "),
        ({"HBS_GDPR__VENDORLIST__V3__HTTP_ENDPOINT_TEMPLATE": "https://gvl.example/v3/list.json"},
         "gdpr.vendorlist.v3.http_endpoint_template: must contain {VERSION} (where the list's version goes): "
         "'https://gvl.example/v3/list.json'"),
        ({"HBS_GDPR__VENDORLIST__V2__HTTP_ENDPOINT_TEMPLATE": "file:///gvl/v{VERSION}.json"},
         "gdpr.vendorlist.v2.http_endpoint_template: not an http(s) URL template: 'file:///gvl/v{VERSION}.json'"),
        ({"HBS_GDPR__VENDORLIST__RETRY_POLICY__EXPONENTIAL_BACKOFF__JITTER": "1.5"},
         "gdpr.vendorlist.retry_policy.exponential_backoff.jitter: must be between 0 and 1, got 1.5"),
        # an endpoint the bidder's adapter cannot use (PBS-Go's amx builder refuses a ';' in the query)
        ({"HBS_ADAPTERS__AMX__ENDPOINT": "https://amx.example/bid?a=1;b=2"},
         "adapters.amx.endpoint: invalid endpoint: 'https://amx.example/bid?a=1;b=2'"),
    ],
)
def test_bad_sync_templates_and_vendor_list_exit_2(env, problem):
    done = run_cli("--check-config", env=env)
    assert done.returncode == 2
    assert done.stderr.startswith(problem)


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ({"xapi": {"username": "u", "password": "s3cret"}}, {"xapi": {"username": "u", "password": REDACTED}}),
        ({"password": ""}, {"password": ""}),  # nothing to hide
        ({"app_secret": "s3cret", "platform_id": "p"}, {"app_secret": REDACTED, "platform_id": "p"}),
        ("postgres://hb:s3cret@db.example:5432/hb", f"postgres://hb:{REDACTED}@db.example:5432/hb"),
        ("redis://:s3cret@cache.example:6379/0", f"redis://:{REDACTED}@cache.example:6379/0"),
        ("https://user@bidder.example/x", "https://user@bidder.example/x"),  # no password
        ("mail me@example.com", "mail me@example.com"),
        ([{"url": "http://a:b@h.example/"}], [{"url": f"http://a:{REDACTED}@h.example/"}]),
    ],
)
def test_redact_masks_passwords(value, shown):
    assert redact(value) == shown


def test_check_config_never_prints_secrets(tmp_path):
    path = tmp_path / "hbs.yaml"
    path.write_text(
        "adapters:\n  rubicon:\n    xapi: {username: hb-user, password: s3cret-xapi}\n"
        "cache:\n  redis: {url: 'redis://:s3cret-redis@127.0.0.1:6379/0'}\n"
    )
    done = run_cli("--config", str(path), "--check-config")
    assert done.returncode == 0, done.stderr
    assert "s3cret" not in done.stdout
    effective = yaml.safe_load(done.stdout)
    assert effective["adapters"]["rubicon"]["xapi"] == {"username": "hb-user", "password": REDACTED, "tracker": ""}
    assert effective["cache"]["redis"]["url"] == f"redis://:{REDACTED}@127.0.0.1:6379/0"


def test_check_config_creates_no_analytics_file(tmp_path):
    target = tmp_path / "analytics.jsonl"
    done = run_cli("--check-config", env={"HBS_ANALYTICS__FILE__FILENAME": str(target)})
    assert done.returncode == 0, done.stderr
    assert not target.exists()


def test_analytics_path_that_is_a_directory_is_a_config_problem(tmp_path):
    done = run_cli("--check-config", env={"HBS_ANALYTICS__FILE__FILENAME": str(tmp_path)})
    assert done.returncode == 2
    assert done.stderr == f"analytics.file.filename: cannot open {str(tmp_path)!r}: Is a directory\n"


@pytest.mark.parametrize("workers", ["0", "2"])
def test_any_free_port_with_several_workers_is_refused(workers):
    done = run_cli("--check-config", "--port", "0", "--workers", workers)
    several = workers != "0" or usable_cpus() > 1  # 0 = one worker per usable CPU
    assert done.returncode == (2 if several else 0), done.stderr
    if several:
        assert done.stderr == "port: 0 (any free port) cannot be shared by several workers; name a port\n"


@pytest.mark.parametrize(
    ("keys", "expected"),
    [
        ({}, []),
        ({"cache": {"serve_endpoint": False, "public_url": "https://cache.example/cache"}}, []),
        ({"cache": {"serve_endpoint": False}, "external_url": "https://pbs.example/"},
         ["cache.serve_endpoint is false and cache.public_url is empty: hb_cache_host/hb_cache_path name "
          "https://pbs.example/cache, which this server does not serve"]),
        ({"stored_requests": {"filesystem": {"directorypath": "/nonexistent/by_id"}}},
         ["stored_requests.filesystem.directorypath '/nonexistent/by_id' does not exist; nothing is stored there"]),
    ],
    ids=["defaults", "public-url", "cache-not-served", "no-stored-dir"],
)
def test_startup_warnings(tmp_path, keys, expected):
    base = {"stored_requests": {"filesystem": {"directorypath": str(tmp_path)}}}
    assert startup_warnings(make_config(deep_merge(base, keys))) == expected
