"""POST /openrtb2/video (PBS-Go's deprecated endpoint, issue 45 item 3): PBS-Go's nine sample requests
end to end through the server, an AppNexus mock on a real socket bidding on every imp; off by
default (501), body limits, bad input, pod errors; the request and answer builders as table rows."""

from __future__ import annotations

import copy
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from hbserver.auction.request.video import PodError, parse_video_request, pod_imps
from hbserver.auction.response.adpods import CachingFailed, build_adpods, find_targeting, pod_id_of, wanted_key
from hbserver.config import ConfigError
from hbserver.endpoints.video import DISABLED_TEXT, ERROR_PREFIX
from tests.conftest import make_config

SAMPLES = json.loads((Path(__file__).parent / "video_samples.json").read_text())["samples"]
STORED_VIDEO_ID = "80ce30c53c16e6ede735f123ef6e32361bfc7b22"
# PBS-Go's test data (video_auction_test.go): the stored video request and the pods' stored imps
STORED_VIDEO = {"accountid": "11223344", "site": {"page": "mygame.foo.com"}}
STORED_IMPS = {
    "fba10607-0c12-43d1-ad07-b8a513bc75d6": {"ext": {"appnexus": {"placementId": 14997137}}},
    "8b452b41-2681-4a20-9086-6f16ffad7773": {"ext": {"appnexus": {"placementId": 15016213}}},
}


# A category per slot, each FreeWheel's own (PBS-Go keeps one bid per category in an auction): IAB code,
# FreeWheel id (PBS-Go's freewheel.json); slot 1_0's is the one PBS-Go's video tests show (395).
CATEGORIES = [
    ("IAB20-1", "395"),
    ("IAB1-1", "404"),
    ("IAB1-2", "392"),
    ("IAB1-5", "419"),
    ("IAB2-1", "399"),
    ("IAB3-1", "393"),
    ("IAB3-4", "408"),
    ("IAB3-5", "390"),
    ("IAB3-7", "398"),
    ("IAB4-2", "405"),
    ("IAB4-7", "406"),
    ("IAB4-9", "417"),
    ("IAB4-10", "429"),
    ("IAB7-32", "402"),
    ("IAB7-44", "433"),
    ("IAB8-1", "394"),
    ("IAB8-5", "400"),
    ("IAB8-6", "401"),
    ("IAB8-9", "407"),
    ("IAB9-3", "418"),
    ("IAB9-5", "414"),
    ("IAB9-6", "412"),
    ("IAB9-7", "413"),
]


def slot_of(imp_id: str) -> int:
    pod, slot = (int(part) for part in imp_id.split("_"))
    return (pod - 1) * 12 + slot


def price_of(imp_id: str) -> float:
    """A price per slot, all different."""
    return 20 - 0.5 * slot_of(imp_id)


class AppnexusMock:
    """AppNexus's endpoint: a video bid of the imp's max duration (30 s without) for every imp, each in
    its own category."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        app = web.Application()
        app.router.add_post("/appnexus", self.handle)
        self.server = TestServer(app)

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.received.append(body)
        bids = []
        for imp in body["imp"]:
            duration = imp["video"].get("maxduration") or 30
            video = {"duration": duration, "mimes": ["video/mp4"]}
            ours = {"brand_id": 1, "bid_ad_type": 1, "creative_info": {"video": video}}
            one = {
                "id": "b" + imp["id"],
                "impid": imp["id"],
                "price": price_of(imp["id"]),
                "crid": "c",
                "adm": '<VAST version="3.0"></VAST>',
                "cat": [CATEGORIES[slot_of(imp["id"])][0]],
                "ext": {"appnexus": ours},
            }
            if imp["id"] == "1_0":
                one["dealid"] = "ABC_123"
            bids.append(one)
        return web.json_response({"id": body["id"], "seatbid": [{"seat": "appnexus", "bid": bids}], "cur": "USD"})

    def imps(self) -> list[dict[str, Any]]:
        return [imp for call in self.received for imp in call["imp"]]


@pytest.fixture
async def appnexus() -> AsyncIterator[AppnexusMock]:
    mock = AppnexusMock()
    await mock.server.start_server()
    yield mock
    await mock.server.close()


@pytest.fixture
def video_client(make_client, data_dir, tmp_path, appnexus):
    for imp_id, imp in STORED_IMPS.items():
        (data_dir / "stored_imps" / f"{imp_id}.json").write_text(json.dumps(imp))
    videos = tmp_path / "video"
    (videos / "stored_requests").mkdir(parents=True)
    (videos / "stored_requests" / f"{STORED_VIDEO_ID}.json").write_text(json.dumps(STORED_VIDEO))

    async def start(**keys: Any):
        raw = {
            "adapters": {"appnexus": {"endpoint": str(appnexus.server.make_url("/appnexus"))}},
            "video": {"enable_deprecated_endpoint": True},
            "stored_video_req": {"filesystem": {"enabled": True, "directorypath": str(videos)}},
        }
        return await make_client(raw, **keys)

    return start


@dataclass(frozen=True)
class Row:
    sample: str
    status: int = 200
    error: str = ""  # the whole body of a refusal
    pods: dict[int, int] = field(default_factory=dict)  # pod id -> targeting entries
    durations: dict[str, tuple[int, int | None]] = field(default_factory=dict)  # imp id -> (max, min)
    user_agent: str = ""  # the User-Agent header sent
    device_ua: str = ""  # the device.ua the bidder must get
    us_privacy: str | None = None
    suffix: str = ""  # hb_pb_cat_dur's bidder-name suffix (appendbiddernames)


UA = (
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_6_8) AppleWebKit/537.13 (KHTML, like Gecko) Version/5.1.7 "
    "Safari/534.57.2"
)
SIX_FIVE = {1: 6, 2: 5}
ROWS = [
    Row(
        "video_invalid_sample",
        500,
        ERROR_PREFIX + " request missing required field: PodConfig.DurationRangeSec"
        " request missing required field: PodConfig.Pods",
    ),
    Row("video_invalid_sample_negative_tmax", 500, ERROR_PREFIX + " request.tmax must be nonnegative. Got -2"),
    Row("video_valid_sample", pods=SIX_FIVE, durations={"1_0": (30, 30), "2_4": (30, 30)}, device_ua=UA),
    Row("video_valid_sample_appendbiddernames", pods=SIX_FIVE, device_ua=UA, suffix="_appnexus"),
    Row("video_valid_sample_ccpa_malformed", pods=SIX_FIVE, device_ua=UA),
    Row("video_valid_sample_ccpa_valid", pods=SIX_FIVE, device_ua=UA, us_privacy="1NYN"),
    Row(
        "video_valid_sample_different_durations",
        pods={1: 12, 2: 10},
        durations={"1_0": (15, 15), "1_5": (15, 15), "1_6": (30, 30), "2_0": (15, 15), "2_5": (30, 30)},
        device_ua=UA,
    ),
    Row(
        "video_valid_sample_with_device_user_agent",
        pods=SIX_FIVE,
        user_agent="TestHeader",
        device_ua="TestHeaderSample",
    ),
    Row("video_valid_sample_without_device_user_agent", pods=SIX_FIVE, user_agent="TestHeader", device_ua="TestHeader"),
]


async def post_sample(client, row: Row):
    headers = {"User-Agent": row.user_agent} if row.user_agent else {}
    return await client.post("/openrtb2/video", json=SAMPLES[row.sample]["requestPayload"], headers=headers)


def test_every_sample_has_a_row():
    assert sorted(r.sample for r in ROWS) == sorted(SAMPLES)


@pytest.mark.parametrize("row", ROWS, ids=[r.sample for r in ROWS])
async def test_pbs_go_samples(video_client, appnexus, row):
    client = await video_client()
    response = await post_sample(client, row)
    text = await response.text()
    assert response.status == row.status, text
    if row.status != 200:
        assert text == row.error
        assert not appnexus.received
        return
    imps = appnexus.imps()
    assert len(imps) == sum(row.pods.values())
    for imp_id, (maxd, mind) in row.durations.items():
        video = next(i["video"] for i in imps if i["id"] == imp_id)
        assert (video.get("maxduration"), video.get("minduration")) == (maxd, mind)
    call = appnexus.received[0]
    assert call["site"]["page"] == "prebid.com"  # the request wins over the stored video request
    assert call["site"]["content"]["series"] == "TvName"
    assert call["device"]["ua"] == row.device_ua
    regs = call.get("regs") or {}
    assert (regs.get("us_privacy") or (regs.get("ext") or {}).get("us_privacy")) == row.us_privacy
    answer = json.loads(text)
    assert {p["podid"]: len(p["targeting"]) for p in answer["adPods"]} == row.pods
    first = answer["adPods"][0]["targeting"][0]
    assert first["hb_pb"] == "20.00" and first["hb_deal"] == "ABC_123" and len(first["hb_cache_id"]) == 36


@pytest.mark.parametrize("row", [r for r in ROWS if r.status == 200], ids=[r.sample for r in ROWS if r.status == 200])
async def test_pbs_go_samples_category_duration(video_client, appnexus, row):
    """hb_pb_cat_dur as PBS-Go writes it: price bucket, FreeWheel's category id, duration."""
    client = await video_client()
    answer = await (await post_sample(client, row)).json()
    for pod in answer["adPods"]:
        for slot, targeting in enumerate(pod["targeting"]):
            imp_id = f"{pod['podid']}_{slot}"
            duration = row.durations.get(imp_id, (30, 30))[0] if row.durations else 30
            if row.sample.endswith("different_durations"):
                duration = 15 if slot < (6 if pod["podid"] == 1 else 5) else 30
            category = CATEGORIES[slot_of(imp_id)][1]
            assert targeting["hb_pb_cat_dur"] == f"{price_of(imp_id):.2f}_{category}_{duration}s{row.suffix}"


async def test_disabled_by_default(make_client):
    client = await make_client()
    response = await client.post("/openrtb2/video", data=b"{}")
    assert response.status == 501
    assert await response.text() == DISABLED_TEXT


async def test_body_limit(video_client, appnexus):
    client = await video_client(max_request_size=1000)
    body = copy.deepcopy(SAMPLES["video_valid_sample"]["requestPayload"])
    body["content"]["title"] = "x" * 2000
    response = await client.post("/openrtb2/video", json=body)
    assert response.status == 413
    assert not appnexus.received


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"storedrequestid": "nope"}, ' Stored Request with ID="nope" not found.'),
        ("not json", " request body is not valid JSON"),
        ([1], " request body must be a JSON object"),
        ({"podconfig": {"durationrangesec": "30"}}, " request.podconfig.durationrangesec must be an array of integers"),
        ({"video": None}, " request missing required field: Video"),
        (
            {"video": {"mimes": ["", ""], "protocols": []}},
            " request missing required field: Video.Mimes, mime types contains empty strings only"
            " request missing required field: Video.Protocols",
        ),
        ({"site": None, "app": {"bundle": ""}}, " request.app missing required field: id or bundle"),
        ({"app": {"id": "a"}}, " request.site or request.app must be defined, but not both"),
        (
            {
                "podconfig": {
                    "durationrangesec": [0, 30],
                    "pods": [{"podid": 1, "adpoddurationsec": 30, "configid": "x"}],
                }
            },
            " duration array cannot contain negative or zero values",
        ),
        (
            {"podconfig": {"durationrangesec": [30], "pods": [{"podid": 1, "adpoddurationsec": 30, "configid": "x"}]}},
            " all pods are incorrect: unable to load configid x, Pod id: 1",
        ),
        (
            {"podconfig": {"durationrangesec": [30], "pods": [{"podid": 0, "adpoddurationsec": -3, "configid": ""}]}},
            " all pods are incorrect: request missing required field: PodConfig.Pods.PodId, Pod index: 0, request"
            " incorrect required field: PodConfig.Pods.AdPodDurationSec is negative, Pod index: 0, request missing or"
            " incorrect required field: PodConfig.Pods.ConfigId, Pod index: 0",
        ),
    ],
)
async def test_bad_input(video_client, appnexus, change, error):
    client = await video_client()
    if isinstance(change, dict):
        body: Any = {**SAMPLES["video_valid_sample"]["requestPayload"], **change}
        response = await client.post("/openrtb2/video", json=body)
    else:
        response = await client.post("/openrtb2/video", data=change if isinstance(change, str) else json.dumps(change))
    assert response.status == 500
    assert await response.text() == ERROR_PREFIX + error
    assert not appnexus.received


async def test_blocked_app_is_503_without_its_text(video_client):
    client = await video_client(blocked_apps=["blocked"])
    body = {**SAMPLES["video_valid_sample"]["requestPayload"], "site": None, "app": {"id": "blocked"}}
    response = await client.post("/openrtb2/video", json=body)
    assert (response.status, await response.text()) == (503, ERROR_PREFIX)


async def test_stored_request_required(video_client):
    client = await video_client(video_stored_request_required=True)
    response = await client.post(
        "/openrtb2/video", json=SAMPLES["video_valid_sample_with_device_user_agent"]["requestPayload"]
    )
    assert (response.status, await response.text()) == (
        500,
        ERROR_PREFIX + " Unable to find required stored request id",
    )


async def test_bad_pods_answered_beside_good_ones(video_client, appnexus):
    client = await video_client()
    body = copy.deepcopy(SAMPLES["video_valid_sample"]["requestPayload"])
    body["podconfig"]["pods"].append({"podid": 2, "adpoddurationsec": 0, "configid": ""})
    answer = await (await client.post("/openrtb2/video", json=body)).json()
    assert [p["podid"] for p in answer["adPods"]] == [1, 2, 2]
    assert answer["adPods"][2] == {
        "podid": 2,
        "targeting": None,
        "errors": [
            "request duplicated required field: PodConfig.Pods.PodId, Pod id: 2",
            "request missing or incorrect required field: PodConfig.Pods.AdPodDurationSec, Pod index: 2",
            "request missing or incorrect required field: PodConfig.Pods.ConfigId, Pod index: 2",
        ],
    }


# -- the builders as tables (PBS-Go's unit tests) ------------------------------------------------

CACHED = {
    "hb_bidder_appnexus": "appnexus",
    "hb_pb_appnexus": "17.00",
    "hb_pb_cat_dur_appnex": "17.00_123_30s",
    "hb_size": "1x1",
    "hb_uuid_appnexus": "837ea3b7",
    "hb_pb": "17.00",
    "hb_uuid": "837ea3b7",
}
NOT_CACHED = {k: v for k, v in CACHED.items() if "uuid" not in k}


def seat(*targetings: dict[str, str], imp: str = "1_0") -> dict[str, Any]:
    bids = [{"impid": imp, "ext": {"prebid": {"targeting": t}}} for t in targetings]
    return {"seatbid": [{"seat": "appnexus", "bid": bids}]}


@pytest.mark.parametrize(
    ("response", "errors", "expected"),
    [
        (
            seat(CACHED, NOT_CACHED),
            [],
            [
                {
                    "podid": 1,
                    "targeting": [{"hb_pb": "17.00", "hb_pb_cat_dur": "17.00_123_30s", "hb_cache_id": "837ea3b7"}],
                    "errors": None,
                }
            ],
        ),
        ({"seatbid": []}, [], []),
        (
            seat(CACHED, imp="222_3"),
            [PodError(5, 1, ["bad"])],
            [
                {
                    "podid": 222,
                    "targeting": [{"hb_pb": "17.00", "hb_pb_cat_dur": "17.00_123_30s", "hb_cache_id": "837ea3b7"}],
                    "errors": None,
                },
                {"podid": 5, "targeting": None, "errors": ["bad"]},
            ],
        ),
    ],
)
def test_build_adpods(response, errors, expected):
    assert build_adpods(response, errors) == expected


def test_build_adpods_all_uncached_fails():
    with pytest.raises(CachingFailed, match="caching failed for all bids"):
        build_adpods(seat(NOT_CACHED, NOT_CACHED), [])


@pytest.mark.parametrize(
    ("key", "seat_name", "expected"),
    [
        ("_pb_cat_dur", "appnexus", "_pb_cat_dur_appnexus"),
        ("_pb", "20.00", "_pb_20.00"),
        ("_uuid", "x" * 30, "_uuid_" + "x" * 14),
    ],
)
def test_wanted_key(key, seat_name, expected):
    assert wanted_key(key, seat_name) == expected


@pytest.mark.parametrize(
    ("targeting", "wanted", "expected"),
    [
        ({"hb_key": "v"}, "_key12345454", "v"),
        ({"hb_key": "v"}, "12345454", ""),
        ({"hb_pb": "1.00", "hb_pb_cat_dur_appnex": "1.00_1_30s"}, "_pb_cat_dur_appnexus", "1.00_1_30s"),  # longest
        ({"custom_pb_appnexus": "2.00"}, "_pb_appnexus", "2.00"),  # any prefix
    ],
)
def test_find_targeting(targeting, wanted, expected):
    assert find_targeting(targeting, wanted) == expected


@pytest.mark.parametrize(("imp_id", "pod"), [("1_0", 1), ("12_3", 12), ("010_1", 8), ("0x10_1", 16), ("x_1", 0)])
def test_pod_id_of(imp_id, pod):
    assert pod_id_of(imp_id) == pod


@pytest.mark.parametrize(
    ("durations", "exact", "pod_seconds", "expected"),
    [
        ([30], True, 180, [(30, 30)] * 6),
        ([15, 30], True, 60, [(15, 15), (15, 15), (30, 30), (30, 30)]),
        ([15, 30], True, 75, [(15, 15), (15, 15), (30, 30), (30, 30), (30, 30)]),  # the last takes the rest
        ([30, 60], True, 30, [(30, 30), (60, 60)]),  # at least one imp per duration
        ([15, 30], False, 60, [(30, 5)] * 4),  # max the longest, min the request's
    ],
)
def test_pod_imps(durations, exact, pod_seconds, expected):
    body = {
        "podconfig": {
            "durationrangesec": durations,
            "requireexactduration": exact,
            "pods": [{"podid": 3, "adpoddurationsec": pod_seconds, "configid": "c"}],
        },
        "site": {"page": "p"},
        "video": {"mimes": ["video/mp4"], "protocols": [2], "minduration": 5},
    }
    video, errors, pod_errors = parse_video_request(body, "", stored_required=False, blocked_apps=frozenset())
    assert video is not None and not errors and not pod_errors
    imps, _ = pod_imps(video, {"c": {"ext": {"b": {}}}}, [])
    assert [i["id"] for i in imps] == [f"3_{n}" for n in range(len(expected))]
    assert [(i["video"]["maxduration"], i["video"].get("minduration")) for i in imps] == expected


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("Mozilla%2F5.0%20%28Macintosh%29", "Mozilla/5.0 (Macintosh)"),
        ("Mozilla/5.0+(Macintosh)", "Mozilla/5.0+(Macintosh)"),  # no %: taken as it is
        ("", ""),
    ],
)
def test_user_agent_from_header(header, expected):
    body = {"site": {"page": "p"}, "device": {}}
    video, _, _ = parse_video_request(body, header, stored_required=False, blocked_apps=frozenset())
    assert video is not None and video.body["device"].get("ua", "") == expected


@pytest.mark.parametrize(
    ("keys", "problem"),
    [
        ({"video": {"enable_deprecated_endpoint": "yes"}}, "video.enable_deprecated_endpoint: must be a boolean"),
        ({"video_stored_request_required": 1}, "video_stored_request_required: must be a boolean"),
        (
            {"stored_video_req": {"filesystem": {"enabled": True}}},
            "stored_video_req.filesystem.directorypath: required when stored_video_req.filesystem.enabled is true",
        ),
    ],
)
def test_config_problems_name_the_key(keys, problem):
    with pytest.raises(ConfigError) as caught:
        make_config(keys)
    assert any(p.startswith(problem) for p in caught.value.problems), caught.value.problems
