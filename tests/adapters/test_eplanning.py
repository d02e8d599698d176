"""e-planning adapter: space names and sizes, the query, the supply chain, the cache buster, the answer."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from hbserver.adapters.base import AdapterConfig, RequestInfo
from hbserver.adapters.common import JsonShapeError
from hbserver.adapters.eplanning import build, clean_name, supply_chain
from tests.adapters.helpers import bids_for, requests_of

ENDPOINT = "http://rtb.e-planning.net/pbs/1"
INFO = RequestInfo(bidder="eplanning")


def adapter(testing: bool = True):
    built = build(AdapterConfig("eplanning", ENDPOINT))
    built.testing = testing
    return built


def imp(imp_id: str = "i1", ci: Any = "ci1", unit: str = "unit", **media: Any) -> dict[str, Any]:
    return {
        "id": imp_id,
        **(media or {"banner": {"w": 300, "h": 250}}),
        "ext": {"bidder": {"ci": ci, "adunit_code": unit}},
    }


def query_of(request: dict[str, Any]) -> dict[str, list[str]]:
    calls, _, errors = requests_of(adapter(), request, INFO)
    assert errors == []
    return parse_qs(urlsplit(calls[0].uri).query)


@pytest.mark.parametrize(
    ("name", "want"),
    [("test_adunit-code.1/x", "testadunitcode1x"), ("a(b)c", "a_b_c"), ("(a)(b)", "a_b"), ("::x::", "x"), ("", "")],
)
def test_clean_name(name, want):
    assert clean_name(name) == want


@pytest.mark.parametrize(
    ("media", "devicetype", "want"),
    [
        ({"banner": {"w": 0, "h": 0}}, 2, "unit:1x1"),
        ({"banner": {"format": [{"w": 300, "h": 50}, {"w": 728, "h": 90}, {"w": 1, "h": 1}]}}, 2, "unit:728x90"),
        ({"banner": {"format": [{"w": 300, "h": 50}, {"w": 728, "h": 90}, {"w": 1, "h": 1}]}}, 4, "unit:300x50"),
        ({"banner": {"format": [{"w": 120, "h": 60}, {"w": 0, "h": 90}]}}, 2, "unit:120x60"),
        ({"video": {"w": 640, "h": 360, "placement": 1}}, 2, "video_640x360_0:640x360;1"),
        ({"video": {"w": 640, "placement": 1}}, 2, "video_640x480_0:640x480;1"),
    ],
)
def test_space_entry(media, devicetype, want):
    request = {"id": "r", "imp": [imp(**media)], "device": {"devicetype": devicetype}}
    assert query_of(request)["e"] == [want]


@pytest.mark.parametrize(
    ("placements", "want_vctx", "want_errors"),
    [
        ([None], None, []),
        ([1, 3], ["1"], ["Ignoring imp id=i1, auction instream and imp no instream"]),
        ([3, None], ["2"], ["Ignoring imp id=i1, auction outstream and imp no outstream"]),
    ],
)
def test_video_context(placements, want_vctx, want_errors):
    imps = [
        imp(f"i{n}", video={"w": 1, "h": 2, "placement": p}) if p else imp(f"i{n}") for n, p in enumerate(placements)
    ]
    calls, _, errors = requests_of(adapter(), {"id": "r", "imp": imps}, INFO)
    assert [e.message for e in errors] == want_errors
    assert parse_qs(urlsplit(calls[0].uri).query).get("vctx") == want_vctx
    assert calls[0].imp_ids == [i["id"] for i in imps]


@pytest.mark.parametrize(
    ("extra", "want_path", "want"),
    [
        ({}, "/pbs/1/ci1/1/FILE/ROS", {"ur": ["FILE"]}),
        ({"site": {"page": "https://pub.com:8080/a?b=c"}}, "/pbs/1/ci1/1/pub.com/ROS", {"ur": ["https://pub.com:8080/a?b=c"]}),
        ({"site": {"page": "x", "domain": "d.com"}, "user": {"buyeruid": "u"}}, "/pbs/1/ci1/1/d.com/ROS",
         {"ur": ["x"], "uid": ["u"]}),
        ({"app": {"bundle": "b.c", "name": "N", "id": "7"}, "device": {"ifa": "f", "ip": "1.2.3.4"}},
         "/pbs/1/ci1/1/b.c/ROS", {"app": ["1"], "appn": ["N"], "appid": ["7"], "ifa": ["f"], "ip": ["1.2.3.4"]}),
    ],
)  # fmt: skip
def test_target_and_query(extra, want_path, want):
    calls, _, _ = requests_of(adapter(), {"id": "r", "imp": [imp()], **extra}, INFO)
    parts = urlsplit(calls[0].uri)
    query = parse_qs(parts.query)
    assert parts.path == want_path
    assert {key: query[key] for key in query if key not in ("e", "ncb")} == want


def test_unparsable_page_is_refused_in_go_words():
    calls, _, errors = requests_of(adapter(), {"id": "r", "imp": [imp()], "site": {"page": "http://a%zz.com"}}, INFO)
    assert (calls, [e.message for e in errors]) == ([], ['parse "http://a%zz.com": invalid URL escape "%zz"'])


@pytest.mark.parametrize(
    ("ext", "want"),
    [
        ({"schain": {"ver": "1.0", "complete": 1, "nodes": [{"asi": "a b", "sid": "1", "hp": 1, "ext": {"x": "<"}}]}},
         '1.0,1!a%20b,1,1,,,,%7B%22x%22%3A%22%5Cu003c%22%7D'),
        ({"schain": {"ver": "1.0", "complete": 0, "nodes": [{"asi": "a"}, {"asi": "b", "name": "c,d"}]}},
         "1.0,0!a,,,,,,!b,,,,c%2Cd,,"),
        ({"schain": {"ver": "1.0", "nodes": [{}, {}, {}]}}, ""),
        ({"schain": {"nodes": []}}, ""),
        ({"other": 1}, ""),
    ],
)  # fmt: skip
def test_supply_chain(ext, want):
    assert supply_chain(ext) == want


@pytest.mark.parametrize("ext", [{"schain": ""}, {"schain": {"nodes": [{"asi": 1}]}}, {"schain": {"complete": "1"}}])
def test_supply_chain_that_does_not_decode(ext):
    with pytest.raises(JsonShapeError):
        supply_chain(ext)


def test_production_sends_a_cache_buster_and_no_body():
    calls, _, _ = requests_of(adapter(testing=False), {"id": "r", "imp": [imp()]}, INFO)
    assert calls[0].method == "GET" and calls[0].body is None
    assert parse_qs(urlsplit(calls[0].uri).query)["rnd"][0].isdigit()


@pytest.mark.parametrize(
    ("ads", "want"),
    [
        ([{"i": "b1", "pr": "1.5", "adm": "<a>", "crid": "c", "w": 3, "h": 4, "adom": "x.com"}],
         [{"id": "b1", "impid": "i1", "price": 1.5, "adm": "<a>", "crid": "c", "w": 3, "h": 4, "adomain": ["x.com"]}]),
        ([{"i": "b1", "pr": "free"}, {"i": "b2", "pr": "2"}], [{"id": "b2", "impid": "i1", "price": 2.0}]),
    ],
)  # fmt: skip
def test_answer(ads, want):
    request = {"id": "r", "imp": [imp()]}
    response, errors = bids_for(adapter(), request, {"sp": [{"k": "unit", "a": ads}]})
    assert errors == [] and response is not None
    assert [(typed.bid, typed.bid_type) for typed in response.bids] == [(bid, "banner") for bid in want]


@pytest.mark.parametrize(
    ("body", "want"),
    [
        (b"[]", "Error unmarshaling HB response: expect { or n, but found ["),
        ({"sp": [{"a": [{"w": -1}]}]}, "Error unmarshaling HB response: cannot unmarshal eplanning.hbResponseAd.Width"),
        ({"sp": {}}, "Error unmarshaling HB response: cannot unmarshal eplanning.hbResponse.Spaces"),
    ],
)
def test_answer_that_does_not_decode(body, want):
    response, errors = bids_for(adapter(), {"id": "r", "imp": [imp()]}, body)
    assert response is None
    assert [e.message[: len(want)] for e in errors] == [want]
