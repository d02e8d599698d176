"""Several uids cookies over real HTTP: /setuid splits, every reader reads the parts back, limits, metrics."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

import pytest

from hbserver.usersync.cookie import UidEntry, UidsCookie, decode_cookie, encode_cookie
from hbserver.usersync.parts import measured_part_size
from tests.auction.helpers import banner_imp, bidder_config
from tests.test_setuid import optout_form

REDIRECT = {"redirect": {"url": "https://sync.test/s?r={{.RedirectURL}}", "user_macro": "$UID"}}
SYNCERS = {f"k{i}": {"alias_of": "generic", "usersync": {"key": f"k{i}", **REDIRECT}} for i in range(1, 8)}
UID = "u" * 100  # two such uids fill a 500-byte part
LIMIT = 500


def parts_config(count: int = 3, **host: object) -> dict[str, object]:
    return {"adapters": SYNCERS, "external_url": "https://pbs.test",
            "host_cookie": {"max_cookie_size_bytes": LIMIT, "number_of_uid_cookies": count, **host}}


def apply_set_cookies(jar: dict[str, str], response) -> list[tuple[str, str, str]]:
    """Update the browser's ``jar`` from the response; (name, value, attributes) of each Set-Cookie."""
    written = []
    for header in response.headers.getall("Set-Cookie", []):
        name, value, attributes = re.match(r"([^=]+)=([^;]*); (.*)", header).groups()
        written.append((name, value, attributes))
        if "Max-Age=0" in attributes:
            jar.pop(name, None)
        else:
            jar[name] = value
    return written


def cookie_header(jar: dict[str, str]) -> dict[str, str]:
    return {"Cookie": "; ".join(f"{k}={v}" for k, v in jar.items())} if jar else {}


async def sync_all(client, jar: dict[str, str], keys: list[str]) -> None:
    for key in keys:
        response = await client.get(f"/setuid?bidder={key}&uid={UID}", headers=cookie_header(jar))
        assert response.status == 200, await response.text()
        for name, value, _ in apply_set_cookies(jar, response):
            assert measured_part_size(name, value) <= LIMIT


async def metric_lines(client, family: str) -> list[str]:
    text = await (await client.get("/metrics")).text()
    return [line for line in text.splitlines() if line.startswith(f"hbserver_{family}")]


async def test_setuid_splits_and_every_reader_reads_the_parts_back(make_client):
    client = await make_client(parts_config())
    jar: dict[str, str] = {}
    await sync_all(client, jar, [f"k{i}" for i in range(1, 7)])
    assert sorted(jar) == ["uids", "uids2", "uids3"]
    assert [sorted(decode_cookie(jar[n]).uids) for n in ("uids", "uids2", "uids3")] == [
        ["k1", "k2"], ["k3", "k4"], ["k5", "k6"]]  # same second, same expiry: key order
    getuids = await (await client.get("/getuids", headers=cookie_header(jar))).json()
    assert getuids == {"buyeruids": {f"k{i}": UID for i in range(1, 7)}}
    body = json.dumps({"bidders": ["k1", "k4", "k6", "k7"], "limit": 10})
    sync = await (await client.post("/cookie_sync", data=body, headers=cookie_header(jar))).json()
    assert sync["status"] == "ok"
    assert [s["bidder"] for s in sync["bidder_status"]] == ["k7"]  # the others are in sync, whichever part


async def test_beyond_the_last_part_is_left_out_and_counted(make_client):
    client = await make_client(parts_config(), user_sync={"priority_groups": [["k7"]]})
    jar: dict[str, str] = {}
    await sync_all(client, jar, [f"k{i}" for i in range(1, 8)])
    kept = {k for part in jar.values() for k in decode_cookie(part).uids}
    assert kept == {"k7", "k1", "k2", "k3", "k4", "k5"}  # priority first, then oldest (by key): k6 is out
    assert decode_cookie(jar["uids"]).uids.keys() == {"k7", "k1"}
    sets = await metric_lines(client, "syncer_sets")
    assert 'hbserver_syncer_sets{status="sizeblocked",syncer="k6"} 1.0' in sets
    assert not any("sizedout" in line for line in sets)


async def test_priority_uids_beyond_the_last_part_are_sized_out(make_client):
    client = await make_client(parts_config(count=2), user_sync={"priority_groups": [[f"k{i}" for i in range(1, 8)]]})
    jar: dict[str, str] = {}
    await sync_all(client, jar, ["k1", "k2", "k3", "k4", "k5"])
    assert sorted(k for part in jar.values() for k in decode_cookie(part).uids) == ["k1", "k2", "k3", "k4"]
    assert 'hbserver_syncer_sets{status="sizedout",syncer="k5"} 1.0' in await metric_lines(client, "syncer_sets")


async def test_a_uid_too_large_for_a_part_is_refused(make_client):
    client = await make_client(parts_config())
    response = await client.get("/setuid?bidder=k1&uid=" + "x" * 600)
    assert (response.status, await response.text()) == (
        400, "uid that's trying to be synced is bigger than MaxCookieSize")
    assert "Set-Cookie" not in response.headers


async def test_emptied_parts_are_deleted_only_when_sent(make_client):
    client = await make_client(parts_config())
    jar: dict[str, str] = {}
    await sync_all(client, jar, ["k1", "k2", "k3"])
    assert sorted(jar) == ["uids", "uids2"]
    response = await client.get("/setuid?bidder=k3", headers=cookie_header(jar))  # no uid: k3 removed
    written = apply_set_cookies(jar, response)
    assert [(name, value) for name, value, _ in written if not value] == [("uids2", "")]  # not uids3
    deleted = next(attributes for name, _, attributes in written if name == "uids2")
    assert deleted == ("Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; SameSite=None; Secure; "
                       "HttpOnly")
    assert sorted(jar) == ["uids"]


async def test_optout_clears_every_part(make_client):
    client = await make_client(parts_config(domain="pbs.test"))
    jar: dict[str, str] = {}
    await sync_all(client, jar, [f"k{i}" for i in range(1, 6)])
    token, token_cookie = await optout_form(client)
    headers = cookie_header(jar)
    headers["Cookie"] += "; " + token_cookie
    out = await client.post("/optout", data={"optout": "1", "token": token}, headers=headers,
                            allow_redirects=False)
    assert out.status == 303
    written = apply_set_cookies(jar, out)
    assert [(n, "Max-Age=0" in a, "Domain=pbs.test" in a) for n, _, a in written] == [
        ("uids", False, True), ("uids2", True, True), ("uids3", True, True)]
    assert jar.keys() == {"uids"} and decode_cookie(jar["uids"]) == UidsCookie(optout=True)
    blocked = await client.get("/setuid?bidder=k1&uid=1", headers=cookie_header(jar))
    assert blocked.status == 401


@pytest.mark.parametrize(("count", "buyeruid"), [(2, "from-uids2"), (1, None)])
async def test_auction_reads_buyeruids_from_every_part(make_client, bidders, count, buyeruid):
    bidders.bids["alpha"] = []
    config = bidder_config(bidders, "alpha")
    config["host_cookie"] = {"number_of_uid_cookies": count, "size_threshold_bytes": 150}
    client = await make_client(config)
    live = datetime.now(UTC) + timedelta(days=1)
    jar = {"uids": encode_cookie(UidsCookie({"other": UidEntry("o", live)})),
           "uids2": encode_cookie(UidsCookie({"generic": UidEntry("from-uids2", live)}))}
    body = {"id": "r", "imp": [banner_imp("imp-1", alpha={})], "site": {"page": "https://p.test"}}
    response = await client.post("/openrtb2/auction", data=json.dumps(body), headers=cookie_header(jar))
    assert response.status == 200
    assert bidders.received["alpha"][0].get("user", {}).get("buyeruid") == buyeruid
    lines = await metric_lines(client, "uids_cookie_size")
    size = len(jar["uids"]) + (len(jar["uids2"]) if count == 2 else 0)  # about 100 bytes alone, 200 with uids2
    assert f"hbserver_uids_cookie_size_bytes_sum {float(size)}" in lines
    assert f"hbserver_uids_cookie_size_over_threshold {float(count == 2)}" in lines


@pytest.mark.parametrize(
    ("count", "threshold", "observed", "over"),
    [
        (2, 0, "both", 0),  # the parts' sizes together; no threshold, nothing counted
        (2, 100, "both", 1),
        (2, 100000, "both", 0),
        (1, 100, "uids", 1),  # one cookie: uids2 is nobody's
    ],
)
async def test_size_metrics(make_client, count, threshold, observed, over):
    client = await make_client(parts_config(count=count, size_threshold_bytes=threshold))
    live = datetime.now(UTC) + timedelta(days=1)
    jar = {"uids": encode_cookie(UidsCookie({"k1": UidEntry(UID, live)})),
           "uids2": encode_cookie(UidsCookie({"k2": UidEntry(UID, live)}))}
    response = await client.get(f"/setuid?bidder=k3&uid={UID}", headers=cookie_header(jar))
    assert response.status == 200
    size = len(jar["uids"]) + (len(jar["uids2"]) if observed == "both" else 0)
    lines = await metric_lines(client, "uids_cookie_size")
    assert f"hbserver_uids_cookie_size_bytes_sum {float(size)}" in lines
    assert f"hbserver_uids_cookie_size_over_threshold {float(over)}" in lines  # counters without _total


async def test_one_cookie_writes_exactly_as_before(make_client):
    """N = 1: the uids2 a browser may still carry changes nothing (one Set-Cookie, the same bytes)."""
    client = await make_client(parts_config(count=1))
    live = datetime.now(UTC) + timedelta(days=1)
    jar = {"uids": encode_cookie(UidsCookie({"k1": UidEntry("a", live)}))}
    plain = await client.get("/setuid?bidder=k2&uid=b", headers=cookie_header(jar))
    with_stale = await client.get("/setuid?bidder=k2&uid=b", headers=cookie_header({**jar, "uids2": jar["uids"]}))
    assert len(plain.headers.getall("Set-Cookie")) == len(with_stale.headers.getall("Set-Cookie")) == 1
    first, second = plain.headers["Set-Cookie"], with_stale.headers["Set-Cookie"]
    assert first.split(";")[0] == second.split(";")[0] and first.startswith("uids=")
