"""Profiles, the parts after the first (issue 42 item 6): on /openrtb2/amp (PBS-Java's AmpRequestFactory:
the stored request's profiles, before AMP's rules and the query's overrides), its memo of prepared
requests, the account's own profile files (PBS-Java's ``<account>-<id>.json``) and PBS-Java's profile
metrics, read from /metrics. End to end through the real app with a mock bidder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hbserver.appkeys import STORED
from hbserver.auction.request.profiles import ProfileIds, resolve, wanted_ids
from tests.auction.helpers import auction_request, banner_imp, bid, bidder_config
from tests.conftest import write_account

QUERY = "tag_id=t1&slot=%2F1%2Fs&curl=https%3A%2F%2Fpub.example%2Fpage&account=1001"


def _profile(kind: str, body: Any, precedence: str | None = None) -> bytes:
    doc: dict[str, Any] = {"type": kind, "body": body}
    if precedence is not None:
        doc["mergeprecedence"] = precedence
    return json.dumps(doc).encode()


def write_profile(data_dir: Path, name: str, kind: str, body: Any, precedence: str | None = None) -> None:
    """``profiles/<name>.json``: ``name`` is an id, or ``<account>-<id>`` for the account's own."""
    folder = data_dir / "profiles"
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.json").write_bytes(_profile(kind, body, precedence))


def amp_stored(request_ids: list[str] | None = None, imp_ids: list[str] | None = None, **fields: Any) -> dict[str, Any]:
    imp: dict[str, Any] = {
        "id": "slot-1",
        "banner": {"format": [{"w": 300, "h": 250}]},
        "ext": {"prebid": {"bidder": {"alpha": {"p": 1}}}},
    }
    if imp_ids is not None:
        imp["ext"]["prebid"]["profiles"] = imp_ids
    stored: dict[str, Any] = {"id": "amp-req", "site": {"page": "https://stored.example/p"}, "imp": [imp], **fields}
    if request_ids is not None:
        stored["ext"] = {"prebid": {"profiles": request_ids}}
    return stored


def _store(data_dir: Path, tag: str, stored: dict[str, Any]) -> None:
    (data_dir / "stored_requests" / f"{tag}.json").write_text(json.dumps(stored))


def _warnings(answer: dict[str, Any]) -> list[str]:
    return [w["message"] for items in answer.get("ext", {}).get("warnings", {}).values() for w in items]


async def _amp(client: Any, query: str = QUERY) -> tuple[int, Any]:
    response = await client.get(f"/openrtb2/amp?{query}")
    text = await response.text()
    return response.status, (json.loads(text) if response.status == 200 else text)


# -- the account's own profiles (PBS-Java's FileApplicationSettings <account>-<id>.json) ---------------------


@pytest.mark.parametrize(
    ("account", "found", "kept"),
    [
        pytest.param("", {"p": b"shared"}, "shared", id="no account: the shared id only"),
        pytest.param("1001", {"p": b"shared", "1001-p": b"own"}, "own", id="the account's own wins"),
        pytest.param("1001", {"p": b"shared"}, "shared", id="none of its own: the shared one"),
        pytest.param("1001", {"2002-p": b"other's"}, None, id="another account's is never read"),
    ],
)
def test_account_profiles_resolve(account: str, found: dict[str, bytes], kept: str | None) -> None:
    ids = ProfileIds(["p"], [])
    asked = wanted_ids(ids, account)
    assert asked == (["1001-p", "p"] if account else ["p"])
    raw = {k: _profile("request", {"from": v.decode()}) for k, v in found.items() if k in asked}
    request_profiles, _imp, errors = resolve(ids, raw, account)
    if kept is None:
        assert errors == ["No profile found for id: p"] and request_profiles == {}
    else:
        assert request_profiles["p"].body == {"from": kept} and errors == []


def test_an_own_profile_of_the_other_type_leaves_the_shared_one() -> None:
    raw = {"1001-p": _profile("imp", {"from": "own"}), "p": _profile("request", {"from": "shared"})}
    request_profiles, _imp, errors = resolve(ProfileIds(["p"], []), raw, "1001")
    assert request_profiles["p"].body == {"from": "shared"} and errors == []


async def test_account_profile_files_end_to_end(make_client, bidders, data_dir: Path) -> None:
    write_profile(data_dir, "bcat", "request", {"bcat": ["IAB1"]})
    write_profile(data_dir, "1001-bcat", "request", {"bcat": ["IAB25"]})
    bidders.bids["alpha"] = [bid("imp-1", 1.0)]
    client = await make_client(bidder_config(bidders, "alpha"))
    for publisher, expected in (("1001", ["IAB25"]), ("2002", ["IAB1"])):
        request = auction_request(
            site={"page": "https://a.example/", "publisher": {"id": publisher}}, ext={"prebid": {"profiles": ["bcat"]}}
        )
        response = await client.post("/openrtb2/auction", data=json.dumps(request))
        assert response.status == 200, await response.text()
        assert bidders.received["alpha"][-1]["bcat"] == expected, publisher


# -- AMP -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("profiles", "stored", "account", "query", "status", "sent", "shown"),
    [
        pytest.param(
            {"bcat": ("request", {"bcat": ["IAB25"]}, None), "floor": ("imp", {"bidfloor": 0.5}, None)},
            amp_stored(["bcat"], ["floor"]),
            None,
            QUERY,
            200,
            {"bcat": ["IAB25"], "imp.bidfloor": 0.5},
            [],
            id="request and imp profiles of the stored request",
        ),
        pytest.param(
            {
                "p": ("request", {"site": {"page": "https://profile.example/", "name": "n"}}, "profile"),
                "i": ("imp", {"tagid": "from-profile", "banner": {"format": [{"w": 1, "h": 1}]}}, "profile"),
            },
            amp_stored(["p"], ["i"]),
            None,
            QUERY + "&w=320&h=50",
            200,
            {
                "site.page": "https://pub.example/page",
                "site.name": "n",
                "imp.tagid": "/1/s",
                "imp.banner.format": [{"w": 320, "h": 50}],
            },
            [],
            id="the query's overrides win over profiles (applied after them)",
        ),
        pytest.param(
            {"p": ("request", {"app": {"id": "a"}}, None)},
            amp_stored(["p"]),
            None,
            QUERY,
            400,
            "Invalid request: The app object must not exist in AMP stored requests.",
            None,
            id="AMP's rules hold for the request after its profiles",
        ),
        pytest.param(
            {},
            amp_stored(["gone"]),
            None,
            QUERY,
            400,
            "Invalid request: Error during processing profiles: No profile found for id: gone\n",
            None,
            id="a missing profile refuses by default",
        ),
        pytest.param(
            {"bcat": ("request", {"bcat": ["IAB25"]}, None)},
            amp_stored(["bcat", "gone"]),
            {"auction": {"profiles": {"fail_on_unknown": False}}},
            QUERY + "&debug=1",
            200,
            {"bcat": ["IAB25"]},
            ["No profile found for id: gone"],
            id="the account lets it go: a debug warning (debug=1 in the query)",
        ),
        pytest.param(
            {"bcat": ("request", {"bcat": ["IAB25"]}, None), "1001-bcat": ("request", {"bcat": ["IAB7"]}, None)},
            amp_stored(["bcat"]),
            None,
            QUERY,
            200,
            {"bcat": ["IAB7"]},
            [],
            id="the query's account picks its own profile",
        ),
        pytest.param(
            {"a": ("request", {"bcat": ["IAB25"]}, None), "b": ("request", {"badv": ["b.example"]}, None)},
            amp_stored(["a", "b"]),
            {"auction": {"profiles": {"limit": 1}}},
            QUERY + "&debug=1",
            200,
            {"bcat": ["IAB25"], "badv": None},
            ["Profiles exceeded the limit."],
            id="the account's limit",
        ),
    ],
)
async def test_amp_profiles(
    make_client,
    bidders,
    data_dir: Path,
    profiles: dict[str, tuple[str, Any, str | None]],
    stored: dict[str, Any],
    account: dict[str, Any] | None,
    query: str,
    status: int,
    sent: Any,
    shown: list[str] | None,
) -> None:
    for name, (kind, body, precedence) in profiles.items():
        write_profile(data_dir, name, kind, body, precedence)
    if account is not None:
        write_account(data_dir, "1001", account)
    _store(data_dir, "t1", stored)
    bidders.bids["alpha"] = [bid("slot-1", 1.0)]
    client = await make_client(bidder_config(bidders, "alpha"))
    got, answer = await _amp(client, query)
    assert got == status, answer
    if status != 200:
        assert answer == sent and "alpha" not in bidders.received
        return
    received = bidders.received["alpha"][0]
    for path, value in sent.items():
        holder: Any = received
        parts = path.split(".")
        for part in parts[:-1]:
            holder = holder["imp"][0] if part == "imp" else holder[part]
        assert holder.get(parts[-1]) == value, path
    assert [w for w in _warnings(answer) if w != "debug turned off for account"] == shown


async def test_amp_memo_follows_profile_changes(make_client, bidders, data_dir: Path) -> None:
    """The prepared request of a slot is served again only while its profiles are the same bytes."""
    write_profile(data_dir, "bcat", "request", {"bcat": ["IAB1"]})
    _store(data_dir, "t1", amp_stored(["bcat"]))
    bidders.bids["alpha"] = [bid("slot-1", 1.0)]
    client = await make_client(bidder_config(bidders, "alpha"))
    stored = client.app[STORED]
    seen = []
    for bcat in ("IAB1", "IAB1", "IAB1", "IAB2", "IAB2"):  # prepared on the second visit, served on the third
        if seen and bcat != seen[-1]:
            write_profile(data_dir, "bcat", "request", {"bcat": [bcat]})
            stored.invalidate("profiles", ["bcat"])
        status, answer = await _amp(client)
        assert status == 200, answer
        seen.append(bcat)
        assert bidders.received["alpha"][-1]["bcat"] == [bcat]
    (data_dir / "profiles" / "bcat.json").unlink()
    stored.invalidate("profiles", ["bcat"])
    status, answer = await _amp(client)
    assert (status, answer) == (
        400,
        "Invalid request: Error during processing profiles: No profile found for id: bcat\n",
    )


async def test_amp_memo_follows_the_accounts_settings(make_client, bidders, data_dir: Path) -> None:
    write_profile(data_dir, "a", "request", {"bcat": ["IAB1"]})
    write_profile(data_dir, "b", "request", {"badv": ["b.example"]})
    _store(data_dir, "t1", amp_stored(["a", "b"]))
    bidders.bids["alpha"] = [bid("slot-1", 1.0)]
    client = await make_client(bidder_config(bidders, "alpha"), account_defaults={"auction": {"profiles": {}}})
    for _ in range(3):
        assert (await _amp(client))[0] == 200
        assert bidders.received["alpha"][-1]["badv"] == ["b.example"]
    write_account(data_dir, "1001", {"auction": {"profiles": {"limit": 1}}})
    stored = client.app[STORED]
    stored.invalidate("accounts", ["1001"])
    assert (await _amp(client))[0] == 200
    assert "badv" not in bidders.received["alpha"][-1]


async def test_amp_without_profiles_never_checks_them(make_client, bidders, data_dir: Path, monkeypatch) -> None:
    """A slot whose stored request names no profile pays nothing for them on its memo's reuse."""

    async def never(*_args: Any) -> bool:
        raise AssertionError("profiles checked for a request without any")

    monkeypatch.setattr("hbserver.endpoints.amp_profiles.AmpProfiles.unchanged", never)
    _store(data_dir, "t1", amp_stored())
    bidders.bids["alpha"] = [bid("slot-1", 1.0)]
    client = await make_client(bidder_config(bidders, "alpha"))
    for _ in range(3):
        assert (await _amp(client))[0] == 200


# -- metrics (PBS-Java's ProfileMetrics, where ProfilesProcessor counts them) --------------------------------


def _metric(text: str, name: str, **labels: str) -> float:
    inner = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    prefix = f"hbserver_{name}{{{inner}}} "
    values = [float(line[len(prefix) :]) for line in text.splitlines() if line.startswith(prefix)]
    return values[0] if values else 0.0


AUCTION_MISSING = auction_request(ext={"prebid": {"profiles": ["ok", "gone"]}})
AUCTION_INVALID = auction_request(ext={"prebid": {"profiles": ["ok", "bad"]}})
AUCTION_OVER = auction_request(
    imp=[{**banner_imp(), "ext": {"prebid": {"bidder": {"alpha": {}}, "profiles": ["i"]}}}],
    ext={"prebid": {"profiles": ["ok"]}},
)


@pytest.mark.parametrize(
    ("account", "request_", "debug", "counts"),
    [
        pytest.param(
            {"auction": {"profiles": {"fail_on_unknown": False}}},
            AUCTION_MISSING,
            False,
            {("profiles", "missing"): 1},
            id="missing: counted, the account's only in debug",
        ),
        pytest.param(
            {"auction": {"profiles": {"fail_on_unknown": False}}},
            AUCTION_MISSING,
            True,
            {("profiles", "missing"): 1, ("account_profiles", "missing"): 1},
            id="missing in debug",
        ),
        pytest.param(None, AUCTION_MISSING, False, {("profiles", "missing"): 1}, id="missing and refused"),
        pytest.param(
            {"auction": {"profiles": {"fail_on_unknown": False}}},
            AUCTION_INVALID,
            False,
            {("profiles", "invalid"): 1},
            id="invalid: a body that is no object",
        ),
        pytest.param(None, AUCTION_INVALID, False, {("profiles", "invalid"): 1}, id="invalid and refused"),
        pytest.param(
            {"auction": {"profiles": {"limit": 1}}},
            AUCTION_OVER,
            True,
            {("account_profiles", "limit_exceeded"): 1},
            id="limit exceeded in debug",
        ),
        pytest.param({"auction": {"profiles": {"limit": 1}}}, AUCTION_OVER, False, {}, id="limit: not without debug"),
    ],
)
async def test_profile_metrics(
    make_client,
    bidders,
    data_dir: Path,
    account: dict[str, Any] | None,
    request_: dict[str, Any],
    debug: bool,
    counts: dict[tuple[str, str], int],
) -> None:
    write_profile(data_dir, "ok", "request", {"bcat": ["IAB25"]})
    write_profile(data_dir, "i", "imp", {"bidfloor": 0.5})
    (data_dir / "profiles" / "bad.json").write_text(json.dumps({"type": "request", "body": [1]}))
    if account is not None:
        write_account(data_dir, "1001", account)
    bidders.bids["alpha"] = [bid("imp-1", 1.0)]
    client = await make_client(bidder_config(bidders, "alpha"))
    body = {**request_, "test": 1} if debug else request_
    await client.post("/openrtb2/auction", data=json.dumps(body))
    text = await (await client.get("/metrics")).text()
    for family, reason in (
        ("profiles", "missing"),
        ("profiles", "invalid"),
        ("account_profiles", "missing"),
        ("account_profiles", "limit_exceeded"),
    ):
        labels = {"reason": reason} if family == "profiles" else {"account": "1001", "reason": reason}
        assert _metric(text, family, **labels) == counts.get((family, reason), 0), (family, reason)


async def test_amp_profile_metrics_count_every_request(make_client, bidders, data_dir: Path) -> None:
    """Served from the memo, a request with a missing profile counts as each one does on the full path."""
    write_profile(data_dir, "ok", "request", {"bcat": ["IAB25"]})
    write_account(data_dir, "1001", {"auction": {"profiles": {"fail_on_unknown": False}}})
    _store(data_dir, "t1", amp_stored(["ok", "gone"]))
    bidders.bids["alpha"] = [bid("slot-1", 1.0)]
    client = await make_client(bidder_config(bidders, "alpha"))
    for _ in range(4):
        assert (await _amp(client))[0] == 200
    text = await (await client.get("/metrics")).text()
    assert _metric(text, "profiles", reason="missing") == 4
    assert _metric(text, "account_profiles", account="1001", reason="missing") == 0  # not debug
