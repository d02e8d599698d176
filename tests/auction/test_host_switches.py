"""Host switches PBS operators use (issue 42 item 5), each under PBS-Go's key name, end to end
through the real app against mock bidders on 127.0.0.1: ``blocked_apps``, ``debug.override_token``
(``X-Pbs-Debug-Override``), ``compression.response.enable_gzip`` and ``default_request``."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from hbserver.auction.request.default_request import load_default_request
from hbserver.config import DefaultRequest, DefaultRequestFile
from hbserver.web.gzip_answers import MIN_SIZE, accepts_gzip
from tests.auction.helpers import auction_request, bid, bidder_config
from tests.conftest import write_account

_request = auction_request


def _app_request(app_id: str) -> dict[str, Any]:
    request = _request(app={"id": app_id, "bundle": "com.example.game", "publisher": {"id": "1001"}})
    del request["site"]
    return request


# -- blocked_apps (PBS-Go validateApp, writeError: 503 and the blockedapp status) -----------------


@pytest.mark.parametrize(
    ("blocked", "app_id", "status"),
    [
        pytest.param(["bad-app"], "bad-app", 503, id="a blocked app is refused"),
        pytest.param(["bad-app"], "good-app", 200, id="another app is served"),
        pytest.param(["", "bad-app"], "good-app", 200, id="PBS-Go's default entry '' blocks nothing"),
        pytest.param([], "bad-app", 200, id="no list, nothing blocked"),
    ],
)
async def test_blocked_apps(make_client, bidders, blocked: list[str], app_id: str, status: int) -> None:
    bidders.bids["alpha"] = [bid("imp-1", 1.0)]
    client = await make_client({**bidder_config(bidders, "alpha"), "blocked_apps": blocked})
    response = await client.post("/openrtb2/auction", data=json.dumps(_app_request(app_id)))
    text = await response.text()
    assert response.status == status, text
    if status == 503:
        assert text == f"Invalid request: Prebid-server does not process requests from App ID: {app_id}\n"
        assert "alpha" not in bidders.received  # no auction ran
        metrics = await (await client.get("/metrics")).text()
        assert 'request_status="blockedapp"' in metrics or 'status="blockedapp"' in metrics


# -- debug.override_token (PBS-Java DebugResolver; PBS-Go exchange.IsDebugOverrideEnabled) ---------


@pytest.mark.parametrize(
    ("token", "header", "request_debug", "shown"),
    [
        pytest.param("s3cret", "s3cret", False, True, id="the token forces debug without the request asking"),
        pytest.param("s3cret", "s3cret", True, True, id="and over an account that disallows debug"),
        pytest.param("s3cret", "wrong", True, False, id="a wrong token: the account's debug_allow holds"),
        pytest.param("s3cret", None, True, False, id="no header: the account's debug_allow holds"),
        pytest.param("", "", True, False, id="no token configured: an empty header overrides nothing"),
    ],
)
async def test_debug_override(
    make_client, bidders, data_dir: Path, token: str, header: str | None, request_debug: bool, shown: bool
) -> None:
    bidders.bids["alpha"] = [bid("imp-1", 1.0)]
    write_account(data_dir, "1001", {"id": "1001", "debug_allow": False})
    client = await make_client({**bidder_config(bidders, "alpha"), "debug": {"override_token": token}})
    request = _request(test=1) if request_debug else _request()
    headers = {"X-Pbs-Debug-Override": header} if header is not None else {}
    response = await client.post("/openrtb2/auction", data=json.dumps(request), headers=headers)
    assert response.status == 200, await response.text()
    ext = (await response.json()).get("ext", {})
    assert ("debug" in ext) is shown
    if shown:
        assert ext["debug"]["httpcalls"]["alpha"][0]["status"] == 200
    warnings = [w["message"] for w in ext.get("warnings", {}).get("general", [])]
    assert ("debug turned off for account" in warnings) is (request_debug and not shown)


# -- compression.response.enable_gzip (PBS-Go server.go getCompressionEnabledHandler: gziphandler) -


@pytest.mark.parametrize(
    ("accept", "expected"),
    [
        ("gzip", True), ("gzip, deflate, br", True), ("deflate, GZIP", True), ("*", True), ("br;q=1, gzip;q=0.5", True),
        ("gzip;q=0", False), ("gzip; q=0.0", False), ("deflate", False), ("", False), ("identity", False),
        ("gzip;q=abc", False), ("x-gzip", False),
    ],
)  # fmt: skip
def test_accepts_gzip(accept: str, expected: bool) -> None:
    assert accepts_gzip(accept) is expected


async def _big_auction(client: Any, bidders: Any, accept: str | None) -> Any:
    """An auction whose answer is well over gziphandler's minimum size."""
    bidders.bids["alpha"] = [bid("imp-1", 1.0, adm="<div>" + "creative " * 400 + "</div>")]
    headers = {"Accept-Encoding": accept} if accept is not None else {"Accept-Encoding": "identity"}
    return await client.post("/openrtb2/auction", data=json.dumps(_request()), headers=headers)


@pytest.mark.parametrize(
    ("enabled", "accept", "gzipped"),
    [
        pytest.param(True, "gzip, deflate", True, id="on, the client accepts gzip: gzipped"),
        pytest.param(True, None, False, id="on, the client accepts no gzip: plain"),
        pytest.param(True, "gzip;q=0", False, id="on, gzip refused with q=0: plain"),
        pytest.param(False, "gzip", False, id="off (PBS-Go's default): plain"),
    ],
)
async def test_gzip_answers(make_client, bidders, enabled: bool, accept: str | None, gzipped: bool) -> None:
    client = await make_client(
        {**bidder_config(bidders, "alpha"), "compression": {"response": {"enable_gzip": enabled}}}
    )
    response = await _big_auction(client, bidders, accept)
    body = await response.read()  # the client undoes the gzip itself
    assert response.status == 200, body[:300]
    assert len(body) >= MIN_SIZE
    assert json.loads(body)["seatbid"][0]["bid"][0]["adm"].startswith("<div>creative")
    assert (response.headers.get("Content-Encoding") == "gzip") is gzipped
    if gzipped:
        assert int(response.headers["Content-Length"]) < len(body) / 3  # what went on the wire is smaller
        assert len(gzip.compress(body)) > 0
    assert (response.headers.get("Vary") == "Accept-Encoding") is enabled


async def test_gzip_leaves_small_answers_plain(make_client) -> None:
    """gziphandler's DefaultMinSize: an answer under 1400 bytes is sent as it is (with Vary)."""
    client = await make_client({"compression": {"response": {"enable_gzip": True}}})
    response = await client.get("/status", headers={"Accept-Encoding": "gzip"})
    assert response.status in (200, 204)
    assert "Content-Encoding" not in response.headers
    assert response.headers["Vary"] == "Accept-Encoding"


# -- default_request (PBS-Go processStoredRequests: merged under the request) ---------------------


async def test_default_request_is_merged_under_the_request(make_client, bidders, tmp_path: Path) -> None:
    bidders.bids["alpha"] = [bid("imp-1", 1.0)]
    default = {
        "tmax": 321,
        "cur": ["USD"],
        "bcat": ["IAB25"],
        "site": {"publisher": {"id": "default-pub"}, "cat": ["IAB1"]},
        "ext": {"prebid": {"targeting": {"pricegranularity": "low"}}},
    }
    path = tmp_path / "default.json"
    path.write_text(json.dumps(default))
    client = await make_client(
        {**bidder_config(bidders, "alpha"), "default_request": {"type": "file", "file": {"name": str(path)}}}
    )
    response = await client.post("/openrtb2/auction", data=json.dumps(_request(tmax=450)))
    assert response.status == 200, await response.text()
    received = bidders.received["alpha"][0]
    assert received["bcat"] == ["IAB25"]  # the default's, the request has none
    assert received["tmax"] <= 450  # the request's own wins
    assert received["site"]["publisher"]["id"] == "1001" and received["site"]["cat"] == ["IAB1"]  # merged deep
    answer = await response.json()
    assert answer["seatbid"][0]["bid"][0]["ext"]["prebid"]["targeting"]["hb_pb"] == "1.00"  # low granularity


async def test_default_request_off_by_default(make_client, bidders) -> None:
    bidders.bids["alpha"] = [bid("imp-1", 1.0)]
    client = await make_client(bidder_config(bidders, "alpha"))
    response = await client.post("/openrtb2/auction", data=json.dumps(_request()))
    assert response.status == 200
    assert "bcat" not in bidders.received["alpha"][0]


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        pytest.param(None, "cannot read", id="a missing file stops start-up"),
        pytest.param("{not json", "is not valid JSON", id="invalid JSON"),
        pytest.param("[1, 2]", "must hold a JSON object", id="not an object"),
        pytest.param('{"tmax": "soon"}', "is not a valid request", id="a field of the wrong type"),
    ],
)
def test_a_bad_default_request_is_refused_at_start(tmp_path: Path, content: str | None, problem: str) -> None:
    path = tmp_path / "default.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ValueError, match=problem) as caught:
        load_default_request(DefaultRequest("file", DefaultRequestFile(str(path))))
    assert "default_request.file.name" in str(caught.value)


@pytest.mark.parametrize(
    "settings",
    [DefaultRequest(), DefaultRequest("", DefaultRequestFile("/nonexistent")), DefaultRequest("file")],
    ids=["nothing configured", "no type", "no file name"],
)
def test_no_default_request(settings: DefaultRequest) -> None:
    assert load_default_request(settings) is None
