"""Profiles (issue 42 item 6), PBS-Java's ``ProfilesProcessor``: table tests of the merge rules, one row
per rule of ``ProfilesProcessorTest`` / ``ProfileSpec``, then end to end through the real app with
profiles on the filesystem (and in PostgreSQL), reading what the mock bidders received."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from hbserver.auction.request.profiles import (
    LIMIT_EXCEEDED,
    ProfileIds,
    ProfileSettings,
    apply,
    apply_profiles,
    parse_profile,
    profile_ids,
    profile_settings,
    resolve,
    truncate,
)
from hbserver.auction.request.stored import StoredDataUnavailable
from hbserver.auction.request.validate import RequestError
from hbserver.stores.stored.postgres import PostgresBackend
from tests.auction.helpers import auction_request, banner_imp, bid, bidder_config
from tests.conftest import write_account
from tests.stores import conftest as stores_fixtures
from tests.stores.conftest import Database

database = stores_fixtures.database  # the fixture: a PostgreSQL schema of its own in database "test"


def _profile(kind: str, body: Any, precedence: str | None = None) -> bytes:
    doc: dict[str, Any] = {"type": kind, "body": body}
    if precedence is not None:
        doc["mergeprecedence"] = precedence
    return json.dumps(doc).encode()


def _with_ids(container: dict[str, Any], *ids: str) -> dict[str, Any]:
    return {**container, "ext": {"prebid": {"profiles": list(ids)}}}


class FakeSource:
    """Profiles by id; records the ids asked; ``errors`` are answered as the stored-data service does."""

    def __init__(self, found: dict[str, bytes], errors: Sequence[str] = ()) -> None:
        self.found = found
        self.errors = list(errors)
        self.asked: list[list[str]] = []

    async def fetch_profiles(self, ids: Sequence[str], timeout_s: float) -> tuple[dict[str, bytes], list[str]]:
        self.asked.append(list(ids))
        found = {i: self.found[i] for i in ids if i in self.found}
        missing = [f'Stored Profile with ID="{i}" not found.' for i in ids if i not in self.found]
        return found, [*missing, *self.errors]


# -- ids and the limit (ProfilesProcessor.profilesIds / truncate) ------------------------------------------


def test_a_request_without_profiles_has_no_ids() -> None:  # processShouldReturnSameBidRequestIfNoProfilesFound
    assert profile_ids({"imp": [{"id": "1"}, {"id": "2", "ext": {"prebid": {"bidder": {}}}}]}) is None
    assert profile_ids({"ext": {"prebid": {"profiles": []}}}) is None


@pytest.mark.parametrize(
    ("request_ids", "imp_ids", "limit", "kept_request", "kept_imps", "exceeded"),
    [
        pytest.param(["rp1", "rp2", "rp3"], [["ip11", "ip12"], ["ip21", "ip22"], ["ip31", "ip32"]], 100,
                     ["rp1", "rp2", "rp3"], [["ip11", "ip12"], ["ip21", "ip22"], ["ip31", "ip32"]], False,
                     id="processShouldFetchExpectedProfiles"),
        pytest.param(["rp1", "rp2", "rp3"], [["ip11", "ip12"], [], ["ip31"]], 4,
                     ["rp1", "rp2", "rp3"], [["ip11"], [], ["ip31"]], True,
                     id="processShouldLimitImpProfiles: each imp keeps limit - request ids"),
        pytest.param(["rp1", "rp2", "rp3"], [["ip11", "ip12"], ["ip21"]], 2,
                     ["rp1", "rp2"], [[], []], True, id="processShouldLimitRequestProfiles"),
        pytest.param(["rp1", "rp2"], [[], []], 2, ["rp1", "rp2"], [[], []], False,
                     id="processShouldHandleCorrectlyWhenLimitEqualsRequestProfilesCount"),
    ],
)
def test_limit(
    request_ids: list[str], imp_ids: list[list[str]], limit: int,
    kept_request: list[str], kept_imps: list[list[str]], exceeded: bool,
) -> None:
    cut, was_exceeded = truncate(ProfileIds(request_ids, imp_ids), limit)
    assert (cut.request, cut.imps, was_exceeded) == (kept_request, kept_imps, exceeded)


def test_ids_read_from_request_and_imps() -> None:
    request = _with_ids({"imp": [_with_ids({"id": "1"}, "ip1"), {"id": "2"}]}, "rp1")
    assert profile_ids(request) == ProfileIds(["rp1"], [["ip1"], []])
    # Jackson's ACCEPT_SINGLE_VALUE_AS_ARRAY: a single string is a list of one
    assert profile_ids({"ext": {"prebid": {"profiles": "rp1"}}}) == ProfileIds(["rp1"], [])
    with pytest.raises(RequestError, match=r"request.imp\[0\].ext.prebid.profiles must be an array of strings"):
        profile_ids({"imp": [{"ext": {"prebid": {"profiles": [1]}}}]})


@pytest.mark.parametrize(
    ("raw", "limit", "fail", "debug"),
    [
        pytest.param({}, 4, True, True, id="PBS-Java's host defaults: limit 4, fail-on-unknown true"),
        pytest.param({"limit": 2, "fail_on_unknown": False}, 2, False, True, id="the account's snake_case keys"),
        pytest.param({"fail-on-unknown": False, "fail_on_unknown": True}, 4, False, True,
                     id="the kebab-case alias (AccountProfilesConfig @JsonAlias) wins"),
    ],
)
def test_settings(raw: dict[str, Any], limit: int, fail: bool, debug: bool) -> None:
    assert profile_settings(raw, True, {"test": 1}) == ProfileSettings(limit, fail, debug)


def test_debug_needs_the_request_and_the_account() -> None:
    assert profile_settings({}, True, {"ext": {"prebid": {"debug": True}}}).debug
    assert not profile_settings({}, False, {"test": 1}).debug
    assert not profile_settings({}, True, {}).debug


# -- stored profiles (Profile, FileApplicationSettings / DatabaseProfilesResultMapper) ---------------------


@pytest.mark.parametrize(
    ("raw", "usable"),
    [
        pytest.param(_profile("request", {}), True, id="mergeprecedence defaults to request"),
        pytest.param(_profile("IMP", {}, "PROFILE"), True, id="enum values upper case too"),
        pytest.param(_profile("banner", {}), False, id="an unknown type: ignored"),
        pytest.param(_profile("imp", {}, "bidder"), False, id="an unknown mergeprecedence: ignored"),
        pytest.param(b"{not json", False, id="not JSON: ignored"),
        pytest.param(_profile("request", "invalid"), True, id="a body that is no object fails at the merge"),
    ],
)
def test_parse(raw: bytes, usable: bool) -> None:
    assert (parse_profile(raw) is not None) == usable


def test_a_profile_of_the_other_type_is_not_found() -> None:  # ProfileSpec: request profile called from imp level
    ids = ProfileIds(["ip1", "rp1"], [["rp1", "ip1", "gone"]])
    found = {"rp1": _profile("request", {}), "ip1": _profile("imp", {})}
    request_profiles, imp_profiles, errors = resolve(ids, found)
    assert (list(request_profiles), list(imp_profiles)) == (["rp1"], ["ip1"])
    assert errors == ["No profile found for id: ip1", "No profile found for id: rp1", "No profile found for id: gone"]


# -- merging (ProfilesProcessor.applyProfiles / mergeProfile / mergeResults) -------------------------------


def _profiles(**docs: bytes) -> dict[str, Any]:
    parsed = {name: parse_profile(raw) for name, raw in docs.items()}
    return {name: profile for name, profile in parsed.items() if profile is not None}


def test_processShouldReturnExpectedResult() -> None:  # PBS-Java's test name
    request = _with_ids({
        "id": "requestId", "test": 0,
        "imp": [_with_ids({}, "ip11", "ip12", "ip13"), _with_ids({}, "ip21", "ip22")],
    }, "rp1", "rp2", "rp3")
    request_profiles = _profiles(
        rp1=_profile("request", {"test": 1, "at": 1}, "request"),
        rp2=_profile("request", "invalid", "profile"),
        rp3=_profile("request", {"id": "newRequestId"}, "profile"),
    )
    imp_profiles = _profiles(
        ip11=_profile("imp", {"id": "id11"}, "request"),
        ip12=_profile("imp", "invalid", "request"),
        ip13=_profile("imp", {"id": "id13"}, "request"),
        ip21=_profile("imp", {"id": "id21"}, "profile"),
        ip22=_profile("imp", {"id": "id22"}, "profile"),
    )
    ids = profile_ids(request)
    assert ids is not None
    merged, errors = apply(request, ids, request_profiles, imp_profiles, fail_on_unknown=False)
    assert (merged["id"], merged["test"], merged["at"]) == ("newRequestId", 0, 1)
    assert [imp["id"] for imp in merged["imp"]] == ["id11", "id22"]
    assert errors == [
        "Can't merge with profile rp2: One of the merge arguments is not an object.",
        "Can't merge with profile ip12: One of the merge arguments is not an object.",
    ]
    assert "at" not in request and "id" not in request["imp"][0]  # the input is not changed


def test_processShouldFailOnInvalidProfileIfFailOnUnknown() -> None:
    request = _with_ids({"id": "requestId"}, "rp1", "rp2")
    profiles = _profiles(rp1=_profile("request", {"at": 1}), rp2=_profile("request", "invalid", "profile"))
    with pytest.raises(RequestError) as caught:
        apply(request, ProfileIds(["rp1", "rp2"], []), profiles, {}, fail_on_unknown=True)
    assert str(caught.value) == (
        "Error during processing profiles: Can't merge with profile rp2: One of the merge arguments is not an object."
    )


@pytest.mark.parametrize(
    ("precedence", "site_id"),
    [
        pytest.param("request", "from-request", id="mergeprecedence request: the request's values win"),
        pytest.param("profile", "from-profile", id="mergeprecedence profile: the profile's values win"),
    ],
)
def test_precedence(precedence: str, site_id: str) -> None:
    request = {"site": {"id": "from-request"}}
    profiles = _profiles(p=_profile("request", {"site": {"id": "from-profile", "name": "n"}}, precedence))
    merged, _ = apply(request, ProfileIds(["p"], []), profiles, {}, False)
    assert merged["site"] == {"id": site_id, "name": "n"}  # merged deep either way


def test_later_profile_wins_with_profile_precedence() -> None:  # ProfileSpec: latest-specified profile
    profiles = _profiles(a=_profile("request", {"site": {"id": "a"}}, "profile"),
                         b=_profile("request", {"site": {"id": "b"}}, "profile"))
    merged, _ = apply({}, ProfileIds(["a", "b"], []), profiles, {}, False)
    assert merged["site"]["id"] == "b"


def test_first_profile_wins_with_request_precedence() -> None:  # ProfileSpec: first-specified profile
    profiles = _profiles(a=_profile("request", {"site": {"id": "a"}}), b=_profile("request", {"site": {"id": "b"}}))
    merged, _ = apply({}, ProfileIds(["a", "b"], []), profiles, {}, False)
    assert merged["site"]["id"] == "a"


@pytest.mark.parametrize("precedence", ["request", "profile"])
def test_a_request_profile_never_changes_the_imps(precedence: str) -> None:
    # ProfileSpec: "PBS should ignore imp data from request profile when imp for profile not null"
    request = {"imp": [{"id": "1", "banner": {"w": 300, "h": 250}}]}
    profiles = _profiles(p=_profile("request", {"imp": [{"id": "x", "video": {}}], "at": 1}, precedence))
    merged, _ = apply(request, ProfileIds(["p"], [[]]), profiles, {}, False)
    assert merged["imp"] == request["imp"] and merged["at"] == 1


def test_inner_profile_ids_are_not_followed() -> None:  # ProfileSpec: ignore inner request profiles
    profiles = _profiles(outer=_profile("request", {"ext": {"prebid": {"profiles": ["inner"]}}, "at": 2}))
    merged, _ = apply({}, ProfileIds(["outer"], []), profiles, {}, False)
    assert merged["at"] == 2 and merged["ext"]["prebid"]["profiles"] == ["inner"]


# -- the whole step (ProfilesProcessor.process) -------------------------------------------------------------


async def _process(
    request: dict[str, Any], source: Any, settings: ProfileSettings
) -> tuple[dict[str, Any], list[str]]:
    ids = profile_ids(request)
    assert ids is not None
    merged, warnings = await apply_profiles(request, ids, source, settings, 0.1)
    return merged, [w.message for w in warnings]


@pytest.mark.parametrize(
    ("settings", "refused", "warnings"),
    [
        pytest.param(ProfileSettings(100, True, False), True, [],
                     id="processShouldFailAndEmitMetricsWhenDebugDisabledAndFailOnUnknownIsTrue"),
        pytest.param(ProfileSettings(100, True, True), True, None,
                     id="processShouldFailAndEmitMetricsWhenDebugEnabledAndFailOnUnknownIsTrue"),
        pytest.param(ProfileSettings(100, False, True), False, ["No profile found for id: rp2"],
                     id="processShouldIgnoreErrorsAndEmitMetricsWhenDebugEnabledAndFailOnUnknownIsFalse"),
        pytest.param(ProfileSettings(100, False, False), False, [],
                     id="fail-on-unknown false, no debug: skipped without a warning"),
    ],
)
async def test_missing_profile(settings: ProfileSettings, refused: bool, warnings: list[str] | None) -> None:
    source = FakeSource({"rp1": _profile("request", {"at": 1})})
    request = _with_ids({"id": "r"}, "rp1", "rp2")
    if refused:
        with pytest.raises(RequestError, match=r"^Error during processing profiles: No profile found for id: rp2$"):
            await _process(request, source, settings)
        return
    merged, shown = await _process(request, source, settings)
    assert merged["at"] == 1 and shown == warnings


async def test_the_limit_warning_is_a_debug_one() -> None:  # ProfileSpec: request overloaded by profiles
    source = FakeSource({p: _profile("request", {p: 1}) for p in ("a", "b", "c")})
    request = _with_ids({"imp": [_with_ids({"id": "1"}, "i")]}, "a", "b", "c")
    merged, shown = await _process(request, source, ProfileSettings(2, False, True))
    assert shown == [LIMIT_EXCEEDED] and "c" not in merged and merged["a"] == merged["b"] == 1
    assert source.asked == [["a", "b"]]  # the imp's profile is past the limit: not fetched
    _merged, quiet = await _process(request, FakeSource(source.found), ProfileSettings(2, False, False))
    assert quiet == []


async def test_same_imp_profile_for_several_imps_is_fetched_once() -> None:
    source = FakeSource({"i": _profile("imp", {"banner": {"btype": [1]}})})
    request = {"imp": [_with_ids({"id": "1"}, "i"), _with_ids({"id": "2"}, "i")]}
    merged, shown = await _process(request, source, ProfileSettings())
    assert [imp["banner"] for imp in merged["imp"]] == [{"btype": [1]}, {"btype": [1]}] and shown == []
    assert source.asked == [["i"]]


async def test_no_store_configured() -> None:  # ProfileSpec: profiles are not configured
    with pytest.raises(RequestError, match=r"^Error during processing profiles: Profiles storage not configured\.$"):
        await _process(_with_ids({}, "p"), None, ProfileSettings())


async def test_a_failed_backend_is_the_servers_fault() -> None:
    source = FakeSource({}, ['Stored Profile with ID="p" could not be fetched: database unavailable'])
    with pytest.raises(StoredDataUnavailable):
        await _process(_with_ids({}, "p"), source, ProfileSettings(4, False, False))


def write_profile(data_dir: Path, profile_id: str, kind: str, body: Any, precedence: str | None = None) -> None:
    folder = data_dir / "profiles"
    folder.mkdir(exist_ok=True)
    (folder / f"{profile_id}.json").write_bytes(_profile(kind, body, precedence))


# -- PostgreSQL: the optional ``profiles`` table ------------------------------------------------------------


async def test_postgres_profiles_table_is_optional_and_read_once_created(database: Database) -> None:
    backend = PostgresBackend(database.dsn)
    await backend.start()
    try:
        # a database without the table (CONTRACT §3's four) still serves the other kinds
        assert await backend.fetch({"profiles": ["p"], "requests": ["r"]}) == {"profiles": {}, "requests": {}}
        assert "profiles" not in await backend.poll()
        await database.conn.execute(
            "CREATE TABLE profiles (id text PRIMARY KEY, data jsonb, updated_at timestamptz NOT NULL DEFAULT now())"
        )
        await database.put("profiles", "p", _profile("request", {"at": 1}).decode())
        assert (await backend.poll())["profiles"] == set()  # found; its rows were never served: not news
        answer = await backend.fetch({"profiles": ["p"]})
        assert parse_profile(answer["profiles"]["p"]) is not None  # type: ignore[arg-type]
        await database.put("profiles", "p", _profile("request", {"at": 2}).decode())
        assert (await backend.poll())["profiles"] == {"p"}  # a change reaches the cache through the poll
    finally:
        await backend.close()


# -- end to end: the real app, profiles on the filesystem, mock bidders on 127.0.0.1 ------------------------


_auction_request = auction_request


def _imp_with_profiles(*ids: str) -> dict[str, Any]:
    imp = banner_imp("imp-1")
    imp["ext"]["prebid"]["profiles"] = list(ids)
    return imp


async def _post(client: Any, request: dict[str, Any]) -> tuple[int, Any]:
    response = await client.post("/openrtb2/auction", data=json.dumps(request))
    text = await response.text()
    return response.status, (json.loads(text) if response.status == 200 else text)


def _warnings(answer: dict[str, Any]) -> list[str]:
    return [w["message"] for items in answer.get("ext", {}).get("warnings", {}).values() for w in items]


async def test_request_and_imp_profiles_reach_the_bidder(make_client, bidders, data_dir: Path) -> None:
    # ProfileSpec: "PBS should use (imp) profile for request when it exist in filesystem"
    write_profile(data_dir, "site-profile", "request", {"site": {"name": "From profile", "cat": ["IAB1"]},
                                                        "device": {"ifa": "ifa-1"}}, "profile")
    write_profile(data_dir, "imp-profile", "imp", {"banner": {"btype": [4]}, "bidfloor": 0.5})
    bidders.bids["alpha"] = [bid("imp-1", 1.0)]
    client = await make_client(bidder_config(bidders, "alpha"))
    status, answer = await _post(client, _auction_request(
        imp=[_imp_with_profiles("imp-profile")], ext={"prebid": {"profiles": ["site-profile"]}},
    ))
    assert status == 200, answer
    received = bidders.received["alpha"][0]
    assert received["site"]["name"] == "From profile" and received["site"]["page"] == "https://news.example/a"
    assert received["device"]["ifa"] == "ifa-1" and received["device"]["ua"] == "test-agent"
    assert received["imp"][0]["banner"]["btype"] == [4] and received["imp"][0]["bidfloor"] == 0.5
    assert received["imp"][0]["banner"]["format"][0] == {"w": 300, "h": 250}  # merged deep: the request's kept
    assert _warnings(answer) == []


async def test_profiles_named_by_a_stored_request(make_client, bidders, data_dir: Path) -> None:
    # PBS-Java reads the ids after StoredRequestProcessor: a stored request may name profiles
    write_profile(data_dir, "bcat", "request", {"bcat": ["IAB25"]})
    stored = {"ext": {"prebid": {"profiles": ["bcat"]}}}
    (data_dir / "stored_requests" / "with-profiles.json").write_text(json.dumps(stored))
    bidders.bids["alpha"] = [bid("imp-1", 1.0)]
    client = await make_client(bidder_config(bidders, "alpha"))
    status, answer = await _post(client, _auction_request(ext={"prebid": {"storedrequest": {"id": "with-profiles"}}}))
    assert status == 200, answer
    assert bidders.received["alpha"][0]["bcat"] == ["IAB25"]


@pytest.mark.parametrize(
    ("account", "request_ext", "status", "shown"),
    [
        pytest.param(None, {}, 400,
                     "Invalid request: Error during processing profiles: No profile found for id: gone\n",
                     id="fail-on-unknown by default (PBS-Java's host default): 400"),
        pytest.param({"auction": {"profiles": {"fail-on-unknown": False}}}, {"test": 1}, 200,
                     ["No profile found for id: gone"],
                     id="the account's fail-on-unknown false: skipped, a debug warning"),
        pytest.param({"auction": {"profiles": {"fail_on_unknown": False}}}, {}, 200, [],
                     id="no debug: no warning"),
        pytest.param({"auction": {"profiles": {"fail_on_unknown": False}}, "debug_allow": False}, {"test": 1}, 200,
                     ["debug turned off for account"], id="debug the account does not allow: no profile warning"),
    ],
)
async def test_missing_profile_end_to_end(
    make_client, bidders, data_dir: Path, account: dict[str, Any] | None, request_ext: dict[str, Any],
    status: int, shown: Any,
) -> None:
    if account is not None:
        write_account(data_dir, "1001", account)
    write_profile(data_dir, "ok", "request", {"bcat": ["IAB25"]})
    bidders.bids["alpha"] = [bid("imp-1", 1.0)]
    client = await make_client(bidder_config(bidders, "alpha"))
    got_status, answer = await _post(client, _auction_request(ext={"prebid": {"profiles": ["ok", "gone"]}},
                                                              **request_ext))
    assert got_status == status, answer
    if status != 200:
        assert answer == shown and "alpha" not in bidders.received
        return
    assert _warnings(answer) == shown
    assert bidders.received["alpha"][0]["bcat"] == ["IAB25"]  # the profile that exists was merged


async def test_account_limit_end_to_end(make_client, bidders, data_dir: Path) -> None:
    # ProfileSpec: "PBS should be able override profile limit by account config"
    write_account(data_dir, "1001", {"auction": {"profiles": {"limit": 1}}})
    write_profile(data_dir, "a", "request", {"bcat": ["IAB25"]})
    write_profile(data_dir, "b", "request", {"badv": ["b.example"]})
    write_profile(data_dir, "i", "imp", {"bidfloor": 0.5})
    bidders.bids["alpha"] = [bid("imp-1", 1.0)]
    client = await make_client(bidder_config(bidders, "alpha"))
    status, answer = await _post(client, _auction_request(
        test=1, imp=[_imp_with_profiles("i")], ext={"prebid": {"profiles": ["a", "b"]}},
    ))
    assert status == 200, answer
    received = bidders.received["alpha"][0]
    assert received["bcat"] == ["IAB25"] and "badv" not in received and "bidfloor" not in received["imp"][0]
    assert LIMIT_EXCEEDED in _warnings(answer)


async def test_malformed_account_profiles_settings(make_client, bidders, data_dir: Path) -> None:
    write_account(data_dir, "1001", {"auction": {"profiles": {"limit": -1}}})
    client = await make_client(bidder_config(bidders, "alpha"))
    status, _answer = await _post(client, _auction_request())
    assert status != 200  # a malformed account is refused, as any other malformed key


async def test_profiles_from_postgres_end_to_end(make_client, bidders, database: Database) -> None:
    await database.conn.execute(
        "CREATE TABLE profiles (id text PRIMARY KEY, data jsonb, updated_at timestamptz NOT NULL DEFAULT now())"
    )
    await database.put("profiles", "db-profile", _profile("request", {"bcat": ["IAB7"]}).decode())
    bidders.bids["alpha"] = [bid("imp-1", 1.0)]
    database_config = {"stored_requests": {"database": {"dsn": database.dsn}}}
    client = await make_client({**bidder_config(bidders, "alpha"), **database_config})
    status, answer = await _post(client, _auction_request(ext={"prebid": {"profiles": ["db-profile"]}}))
    assert status == 200, answer
    assert bidders.received["alpha"][0]["bcat"] == ["IAB7"]
