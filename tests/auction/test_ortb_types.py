"""PBS-Go's JSON type errors for auction requests (hbserver.auction.request.ortb_types): one row per kind of
error and per struct, each with the exact text PBS-Go answers after ``Invalid request: ``.

The texts are json-iterator's (v1.1.12) as PBS-Go's tryExtractErrorMessage reduces them; the quoted
vectors come from PBS-Go's own tests and sample requests (util/jsonutil/jsonutil_test.go,
endpoints/openrtb2/sample-requests/invalid-whole/*.json, auction_test.go, openrtb_ext/*_test.go).
"""

from __future__ import annotations

import copy
import itertools
from pathlib import Path
from typing import Any

import orjson
import pytest

from hbserver.auction.request.ortb_types import (
    app_ext_error,
    body_syntax_error,
    device_ext_error,
    extract_message,
    imp_ext_prebid_error,
    native_request_text_error,
    native_request_type_error,
    request_type_error,
    site_ext_error,
)

REPO = Path(__file__).resolve().parents[2]
REAL_CLIENTS = REPO.parent / "shared" / "fixtures" / "real-clients"
FF = "\ufffd"  # json-iterator's "unexpected character" is the byte 0xff, read as UTF-8

BASE: dict[str, Any] = {
    "id": "r1",
    "imp": [
        {
            "id": "i1",
            "banner": {"format": [{"w": 300, "h": 250}]},
            "ext": {"prebid": {"bidder": {"appnexus": {"placementId": 1}}}},
        }
    ],
    "site": {"page": "https://p.example/", "publisher": {"id": "1001"}},
    "device": {"ua": "UA", "w": 1280},
    "tmax": 1000,
}


def with_value(path: str, value: Any, base: dict[str, Any] | None = None) -> dict[str, Any]:
    """BASE (or ``base``) with ``value`` at the dotted ``path`` (list indexes as numbers); objects on
    the way are created, in the order the path names them."""
    doc = copy.deepcopy(BASE if base is None else base)
    steps: list[Any] = [int(step) if step.isdigit() else step for step in path.split(".")]
    target: Any = doc
    for step, following in itertools.pairwise(steps):
        if isinstance(step, int):
            target = target[step]
        else:
            if target.get(step) is None:
                target[step] = [] if isinstance(following, int) else {}
            target = target[step]
        if isinstance(following, int):
            while len(target) <= following:
                target.append({})
    target[steps[-1]] = value
    return doc


# (path in BASE, value, PBS-Go's text): the typed openrtb2.BidRequest, one row per field kind and struct
TYPED_ROWS: list[tuple[str, Any, str]] = [
    # BidRequest's own fields, one per kind
    ("id", 12, 'cannot unmarshal openrtb2.BidRequest.ID: expects " or n, but found 1'),
    ("imp", {}, "cannot unmarshal openrtb2.BidRequest.Imp: decode slice: expect [ or n, but found {"),
    ("imp.0", "x", 'cannot unmarshal []openrtb2.Imp: expect { or n, but found "'),
    ("site", [], "cannot unmarshal openrtb2.BidRequest.Site: expect { or n, but found ["),
    ("app", "x", 'cannot unmarshal openrtb2.BidRequest.App: expect { or n, but found "'),
    ("dooh", 12, "cannot unmarshal openrtb2.BidRequest.DOOH: expect { or n, but found 1"),
    ("device", True, "cannot unmarshal openrtb2.BidRequest.Device: expect { or n, but found t"),
    ("user", "x", 'cannot unmarshal openrtb2.BidRequest.User: expect { or n, but found "'),
    ("test", 300, "cannot unmarshal ReadInt8: 300"),  # "overflow" has no space: it joins the stack
    ("test", -129, "cannot unmarshal ReadInt8: 129"),
    ("test", "1", f"cannot unmarshal openrtb2.BidRequest.Test: unexpected character: {FF}"),
    ("at", 1.5, "cannot unmarshal openrtb2.BidRequest.AT: can not decode float as int"),
    ("tmax", 1.0, "cannot unmarshal openrtb2.BidRequest.TMax: can not decode float as int"),
    ("tmax", 2**63, "cannot unmarshal ReadInt64: 9223372036854775808"),
    ("tmax", 1e20, "cannot unmarshal openrtb2.BidRequest.TMax: overflow"),
    ("tmax", [1], f"cannot unmarshal openrtb2.BidRequest.TMax: unexpected character: {FF}"),
    ("wseat", "x", 'cannot unmarshal openrtb2.BidRequest.WSeat: decode slice: expect [ or n, but found "'),
    ("cur", [12], 'cannot unmarshal []string: expects " or n, but found 1'),
    ("allimps", True, f"cannot unmarshal openrtb2.BidRequest.AllImps: unexpected character: {FF}"),
    ("cattax", {}, f"cannot unmarshal openrtb2.BidRequest.CatTax: unexpected character: {FF}"),
    ("source", [], "cannot unmarshal openrtb2.BidRequest.Source: expect { or n, but found ["),
    ("regs", 12, "cannot unmarshal openrtb2.BidRequest.Regs: expect { or n, but found 1"),
    # imp and what it holds
    ("imp.0.id", 12, 'cannot unmarshal openrtb2.Imp.ID: expects " or n, but found 1'),
    ("imp.0.banner", "x", 'cannot unmarshal openrtb2.Imp.Banner: expect { or n, but found "'),
    ("imp.0.banner.w", "300", f"cannot unmarshal openrtb2.Banner.W: unexpected character: {FF}"),
    ("imp.0.banner.format", {}, "cannot unmarshal openrtb2.Banner.Format: decode slice: expect [ or n, but found {"),
    ("imp.0.banner.format.0.w", 1.5, "cannot unmarshal openrtb2.Format.W: can not decode float as int"),
    ("imp.0.banner.btype", [300], "cannot unmarshal ReadInt8: 300"),
    ("imp.0.banner.pos", "1", f"cannot unmarshal openrtb2.Banner.Pos: unexpected character: {FF}"),
    (
        "imp.0.video.mimes",
        "video/mp4",
        'cannot unmarshal openrtb2.Video.MIMEs: decode slice: expect [ or n, but found "',
    ),
    ("imp.0.video.protocols", [2, "3"], f"cannot unmarshal []adcom1.MediaCreativeSubtype: unexpected character: {FF}"),
    ("imp.0.video.startdelay", -1.5, "cannot unmarshal openrtb2.Video.StartDelay: can not decode float as int"),
    ("imp.0.video.skip", True, f"cannot unmarshal openrtb2.Video.Skip: unexpected character: {FF}"),
    ("imp.0.audio.minduration", "5", f"cannot unmarshal openrtb2.Audio.MinDuration: unexpected character: {FF}"),
    ("imp.0.native.request", {}, 'cannot unmarshal openrtb2.Native.Request: expects " or n, but found {'),
    ("imp.0.native.api", [True], f"cannot unmarshal []adcom1.APIFramework: unexpected character: {FF}"),
    ("imp.0.pmp", [], "cannot unmarshal openrtb2.Imp.PMP: expect { or n, but found ["),
    ("imp.0.pmp.deals", {}, "cannot unmarshal openrtb2.PMP.Deals: decode slice: expect [ or n, but found {"),
    ("imp.0.pmp.deals.0.bidfloor", "1", "cannot unmarshal openrtb2.Deal.BidFloor: invalid number"),
    ("imp.0.pmp.private_auction", 2.5, "cannot unmarshal openrtb2.PMP.PrivateAuction: can not decode float as int"),
    ("imp.0.bidfloor", "0.5", "cannot unmarshal openrtb2.Imp.BidFloor: invalid number"),
    ("imp.0.bidfloor", True, "cannot unmarshal openrtb2.Imp.BidFloor: invalid number"),
    ("imp.0.secure", True, f"cannot unmarshal openrtb2.Imp.Secure: unexpected character: {FF}"),
    ("imp.0.instl", 128, "cannot unmarshal ReadInt8: 128"),
    ("imp.0.metric", [{"value": "x"}], "cannot unmarshal openrtb2.Metric.Value: invalid number"),
    ("imp.0.qty.multiplier", [], "cannot unmarshal openrtb2.Qty.Multiplier: invalid number"),
    ("imp.0.refresh.count", "1", f"cannot unmarshal openrtb2.Refresh.Count: unexpected character: {FF}"),
    # site, app, dooh and what they hold
    ("site.page", 12, 'cannot unmarshal openrtb2.Site.Page: expects " or n, but found 1'),
    ("site.cat", "IAB1", 'cannot unmarshal openrtb2.Site.Cat: decode slice: expect [ or n, but found "'),
    ("site.mobile", "1", f"cannot unmarshal openrtb2.Site.Mobile: unexpected character: {FF}"),
    ("site.publisher", "p", 'cannot unmarshal openrtb2.Site.Publisher: expect { or n, but found "'),
    ("site.publisher.id", 1001, 'cannot unmarshal openrtb2.Publisher.ID: expects " or n, but found 1'),
    ("site.content", [], "cannot unmarshal openrtb2.Site.Content: expect { or n, but found ["),
    (
        "site.content.producer.cat",
        "x",
        'cannot unmarshal openrtb2.Producer.Cat: decode slice: expect [ or n, but found "',
    ),
    (
        "site.content.data.0.segment",
        {},
        "cannot unmarshal openrtb2.Data.Segment: decode slice: expect [ or n, but found {",
    ),
    ("site.content.livestream", 1.0, "cannot unmarshal openrtb2.Content.LiveStream: can not decode float as int"),
    ("app.publisher.id", 12, 'cannot unmarshal openrtb2.Publisher.ID: expects " or n, but found 1'),
    ("app.paid", 2.0, "cannot unmarshal openrtb2.App.Paid: can not decode float as int"),
    ("dooh.venuetype", "x", 'cannot unmarshal openrtb2.DOOH.VenueType: decode slice: expect [ or n, but found "'),
    ("dooh.venuetypetax", "1", f"cannot unmarshal openrtb2.DOOH.VenueTypeTax: unexpected character: {FF}"),
    # device, geo
    ("device.w", "300", f"cannot unmarshal openrtb2.Device.W: unexpected character: {FF}"),
    ("device.dnt", "0", f"cannot unmarshal openrtb2.Device.DNT: unexpected character: {FF}"),
    ("device.devicetype", 1.5, "cannot unmarshal openrtb2.Device.DeviceType: can not decode float as int"),
    ("device.pxratio", "2", "cannot unmarshal openrtb2.Device.PxRatio: invalid number"),
    ("device.geo", [], "cannot unmarshal openrtb2.Device.Geo: expect { or n, but found ["),
    ("device.geo.lat", "1.2", "cannot unmarshal openrtb2.Geo.Lat: invalid number"),
    (
        "device.sua.browsers",
        {},
        "cannot unmarshal openrtb2.UserAgent.Browsers: decode slice: expect [ or n, but found {",
    ),
    (
        "device.sua.browsers.0.version",
        "1",
        'cannot unmarshal openrtb2.BrandVersion.Version: decode slice: expect [ or n, but found "',
    ),
    # user, eid, uid, data
    ("user.yob", "1990", f"cannot unmarshal openrtb2.User.Yob: unexpected character: {FF}"),
    ("user.eids", {}, "cannot unmarshal openrtb2.User.EIDs: decode slice: expect [ or n, but found {"),
    ("user.eids.0.source", 12, 'cannot unmarshal openrtb2.EID.Source: expects " or n, but found 1'),
    ("user.eids.0.uids", {}, "cannot unmarshal openrtb2.EID.UIDs: decode slice: expect [ or n, but found {"),
    ("user.eids.0.uids.0.atype", "1", f"cannot unmarshal openrtb2.UID.AType: unexpected character: {FF}"),
    ("user.data.0.segment.0.id", 12, 'cannot unmarshal openrtb2.Segment.ID: expects " or n, but found 1'),
    ("user.geo.type", "x", f"cannot unmarshal openrtb2.Geo.Type: unexpected character: {FF}"),
    # source, schain, regs
    ("source.fd", True, f"cannot unmarshal openrtb2.Source.FD: unexpected character: {FF}"),
    ("source.schain.complete", "1", f"cannot unmarshal openrtb2.SupplyChain.Complete: unexpected character: {FF}"),
    (
        "source.schain.nodes",
        {},
        "cannot unmarshal openrtb2.SupplyChain.Nodes: decode slice: expect [ or n, but found {",
    ),
    ("source.schain.nodes.0.hp", "1", f"cannot unmarshal openrtb2.SupplyChainNode.HP: unexpected character: {FF}"),
    ("regs.coppa", "1", f"cannot unmarshal openrtb2.Regs.COPPA: unexpected character: {FF}"),
    ("regs.gdpr", 2.0, "cannot unmarshal openrtb2.Regs.GDPR: can not decode float as int"),
    ("regs.gpp_sid", [1.5], "cannot unmarshal []int8: can not decode float as int"),
]


@pytest.mark.parametrize(("path", "value", "expected"), TYPED_ROWS, ids=[f"{r[0]}={r[1]!r}" for r in TYPED_ROWS])
def test_typed_bid_request(path, value, expected):
    assert request_type_error(with_value(path, value)) == expected


# (path, value, text): the exts convertUpEnsureExt reads, with its prefixes
EXT_ROWS: list[tuple[str, Any, str]] = [
    ("ext", "x", 'req.ext is invalid: expect { or n, but found "'),
    ("ext.prebid", "x", 'req.ext is invalid: expect { or n, but found "'),
    (
        "ext.prebid.debug",
        "true",
        'req.ext is invalid: cannot unmarshal openrtb_ext.ExtRequestPrebid.Debug: expect t or f, but found "',
    ),
    (
        "ext.prebid.aliases",
        {"a": 1},
        'req.ext is invalid: cannot unmarshal openrtb_ext.ExtRequestPrebid.Aliases: expects " or n, but found 1',
    ),
    ("ext.prebid.aliasgvlids", {"a": 70000}, "req.ext is invalid: cannot unmarshal ReadUint16: 70000"),
    (
        "ext.prebid.bidadjustmentfactors",
        {"a": "1"},
        "req.ext is invalid: cannot unmarshal openrtb_ext.ExtRequestPrebid.BidAdjustmentFactors: invalid number",
    ),
    (
        "ext.prebid.bidadjustments.mediatype.banner",
        {"a": {"*": {}}},
        "req.ext is invalid: cannot unmarshal openrtb_ext.MediaType.Banner: decode slice: expect [ or n, but found {",
    ),
    (
        "ext.prebid.cache.bids",
        True,
        "req.ext is invalid: cannot unmarshal openrtb_ext.ExtRequestPrebidCache.Bids: expect { or n, but found t",
    ),
    (
        "ext.prebid.cache.vastxml",
        True,
        "req.ext is invalid: cannot unmarshal openrtb_ext.ExtRequestPrebidCache.VastXML: expect { or n, but found t",
    ),
    (
        "ext.prebid.cache.bids.returnCreative",
        "no",
        "req.ext is invalid: cannot unmarshal openrtb_ext.ExtRequestPrebidCacheBids.ReturnCreative: expect t or f, "
        'but found "',
    ),
    (
        "ext.prebid.channel.name",
        12,
        'req.ext is invalid: cannot unmarshal openrtb_ext.ExtRequestPrebidChannel.Name: expects " or n, but found 1',
    ),
    (
        "ext.prebid.currency.rates",
        {"USD": {"EUR": "x"}},
        "req.ext is invalid: cannot unmarshal openrtb_ext.ExtRequestCurrency.ConversionRates: invalid number",
    ),
    (
        "ext.prebid.data.eidpermissions.0.bidders",
        "x",
        "req.ext is invalid: cannot unmarshal openrtb_ext.ExtRequestPrebidDataEidPermission.Bidders: decode slice: "
        'expect [ or n, but found "',
    ),
    (
        "ext.prebid.floors.floormin",
        "x",
        "req.ext is invalid: cannot unmarshal openrtb_ext.PriceFloorRules.FloorMin: invalid number",
    ),
    (
        "ext.prebid.floors.floorMin",
        "x",
        "req.ext is invalid: cannot unmarshal openrtb_ext.PriceFloorRules.FloorMin: invalid number",
    ),
    (
        "ext.prebid.floors.data.modelgroups.0.values",
        {"a": "b"},
        "req.ext is invalid: cannot unmarshal openrtb_ext.PriceFloorModelGroup.Values: invalid number",
    ),
    (
        "ext.prebid.floors.enforcement.enforcerate",
        1.5,
        "req.ext is invalid: cannot unmarshal openrtb_ext.PriceFloorEnforcement.EnforceRate: can not decode float as "
        "int",
    ),
    (
        "ext.prebid.multibid",
        [{"maxbids": "2"}],
        f"req.ext is invalid: cannot unmarshal openrtb_ext.ExtMultiBid.MaxBids: unexpected character: {FF}",
    ),
    (
        "ext.prebid.multibid",
        [{"Bidder": 12}],
        'req.ext is invalid: cannot unmarshal openrtb_ext.ExtMultiBid.Bidder: expects " or n, but found 1',
    ),
    (
        "ext.prebid.schains",
        [{"schain": {"nodes": "x"}}],
        'req.ext is invalid: cannot unmarshal openrtb2.SupplyChain.Nodes: decode slice: expect [ or n, but found "',
    ),
    (
        "ext.prebid.storedrequest",
        {"id": 12},
        'req.ext is invalid: cannot unmarshal openrtb_ext.ExtStoredRequest.ID: expects " or n, but found 1',
    ),
    (
        "ext.prebid.targeting.includewinners",
        "true",
        "req.ext is invalid: cannot unmarshal openrtb_ext.ExtRequestTargeting.IncludeWinners: expect t or f, but "
        'found "',
    ),
    (
        "ext.prebid.targeting.pricegranularity",
        "foo",
        "req.ext is invalid: cannot unmarshal openrtb_ext.ExtRequestTargeting.PriceGranularity: expect { or n, but "
        'found "',
    ),
    (
        "ext.prebid.targeting.pricegranularity",
        {"precision": "x"},
        "req.ext is invalid: cannot unmarshal openrtb_ext.ExtRequestTargeting.PriceGranularity: cannot unmarshal "
        f"openrtb_ext.PriceGranularityRaw.Precision: unexpected character: {FF}",
    ),
    (
        "ext.prebid.targeting.mediatypepricegranularity.video",
        {"ranges": [{"max": "x"}]},
        "req.ext is invalid: cannot unmarshal openrtb_ext.MediaTypePriceGranularity.Video: cannot unmarshal "
        "openrtb_ext.GranularityRange.Max: invalid number",
    ),
    (
        "ext.prebid.targeting.includebrandcategory.primaryadserver",
        "1",
        "req.ext is invalid: cannot unmarshal openrtb_ext.ExtIncludeBrandCategory.PrimaryAdServer: unexpected "
        f"character: {FF}",
    ),
    (
        "ext.prebid.alternatebiddercodes.bidders",
        {"a": {"allowedbiddercodes": "x"}},
        "req.ext is invalid: cannot unmarshal openrtb_ext.ExtAdapterAlternateBidderCodes.AllowedBidderCodes: decode "
        'slice: expect [ or n, but found "',
    ),
    (
        "ext.prebid.biddercontrols",
        {"a": {"prefmtype": 1}},
        'req.ext is invalid: cannot unmarshal openrtb_ext.BidderControl.PreferredMediaType: expects " or n, but '
        "found 1",
    ),
    (
        "ext.prebid.sdk.renderers",
        [{"version": 2}],
        'req.ext is invalid: cannot unmarshal openrtb_ext.ExtRequestSdkRenderer.Version: expects " or n, but found 2',
    ),
    (
        "ext.prebid.server.gvlid",
        "1",
        f"req.ext is invalid: cannot unmarshal openrtb_ext.ExtRequestPrebidServer.GvlID: unexpected character: {FF}",
    ),
    (
        "ext.prebid.nosale",
        "*",
        "req.ext is invalid: cannot unmarshal openrtb_ext.ExtRequestPrebid.NoSale: decode slice: expect [ or n, but "
        'found "',
    ),
    (
        "ext.schain",
        {"complete": "1"},
        f"req.ext is invalid: cannot unmarshal openrtb2.SupplyChain.Complete: unexpected character: {FF}",
    ),
    ("source.ext", "x", 'req.source.ext is invalid: expect { or n, but found "'),
    (
        "source.ext.schain.ver",
        1,
        'req.source.ext is invalid: cannot unmarshal openrtb2.SupplyChain.Ver: expects " or n, but found 1',
    ),
    ("regs.ext", "malformed", 'req.regs.ext is invalid: expect { or n, but found "'),
    ("regs.ext.gdpr", "1", "req.regs.ext is invalid: gdpr must be an integer"),
    ("regs.ext.gdpr", 1.0, "req.regs.ext is invalid: gdpr must be an integer"),
    ("regs.ext.gdpr", 300, "req.regs.ext is invalid: gdpr must be an integer"),
    (
        "regs.ext.dsa.dsarequired",
        "1",
        f"req.regs.ext is invalid: cannot unmarshal openrtb_ext.ExtRegsDSA.Required: unexpected character: {FF}",
    ),
    (
        "regs.ext.dsa.transparency",
        [{"dsaparams": ["x"]}],
        f"req.regs.ext is invalid: cannot unmarshal []int: unexpected character: {FF}",
    ),
    ("regs.ext.us_privacy", 1, 'req.regs.ext is invalid: expects " or n, but found 1'),
    ("user.ext", "x", 'req.user.ext is invalid: expect { or n, but found "'),
    ("user.ext.consent", 1, 'req.user.ext is invalid: expects " or n, but found 1'),  # user-ext-consent-int.json
    ("user.ext.consent", 2, 'req.user.ext is invalid: expects " or n, but found 2'),  # user-gdpr-consent-invalid.json
    (
        "user.ext.prebid.buyeruids",
        {"a": 1},
        'req.user.ext is invalid: cannot unmarshal openrtb_ext.ExtUserPrebid.BuyerUIDs: expects " or n, but found 1',
    ),
    ("user.ext.eids", {}, "req.user.ext is invalid: decode slice: expect [ or n, but found {"),
    (
        "user.ext.eids",
        [{"uids": [{"id": 1}]}],
        'req.user.ext is invalid: cannot unmarshal openrtb2.UID.ID: expects " or n, but found 1',
    ),
    (
        "user.ext.ConsentedProvidersSettings",
        {"consented_providers": 1},
        "req.user.ext is invalid: cannot unmarshal "
        'openrtb_ext.ConsentedProvidersSettingsIn.ConsentedProvidersString: expects " or n, but found 1',
    ),
    (
        "user.ext.consented_providers_settings",
        {"consented_providers": "1~2"},
        "req.user.ext is invalid: cannot unmarshal openrtb_ext.ConsentedProvidersSettingsOut.ConsentedProvidersList: "
        'decode slice: expect [ or n, but found "',
    ),
    ("imp.0.ext", "x", 'imp[0].imp.ext is invalid: expect { or n, but found "'),
    (
        "imp.0.ext.prebid.storedrequest.id",
        12,
        'imp[0].imp.ext is invalid: cannot unmarshal openrtb_ext.ExtStoredRequest.ID: expects " or n, but found 1',
    ),
    (
        "imp.0.ext.prebid.is_rewarded_inventory",
        "1",
        "imp[0].imp.ext is invalid: cannot unmarshal openrtb_ext.ExtImpPrebid.IsRewardedInventory: unexpected "
        f"character: {FF}",
    ),
    (
        "imp.0.ext.prebid.bidder",
        [],
        "imp[0].imp.ext is invalid: cannot unmarshal openrtb_ext.ExtImpPrebid.Bidder: expect { or n, but found [",
    ),
    (
        "imp.0.ext.prebid.options.echovideoattrs",
        "true",
        'imp[0].imp.ext is invalid: cannot unmarshal openrtb_ext.Options.EchoVideoAttrs: expect t or f, but found "',
    ),
    (
        "imp.0.ext.prebid.floors.floorminCur",
        1,
        'imp[0].imp.ext is invalid: cannot unmarshal openrtb_ext.ExtImpPrebidFloors.FloorMinCur: expects " or n, but '
        "found 1",
    ),
    (
        "imp.0.ext.data.pbadslot",
        1,
        'imp[0].imp.ext is invalid: cannot unmarshal openrtb_ext.ExtImpData.PbAdslot: expects " or n, but found 1',
    ),
    (
        "imp.0.ext.data.adserver",
        "x",
        'imp[0].imp.ext is invalid: cannot unmarshal openrtb_ext.ExtImpData.AdServer: expect { or n, but found "',
    ),
    ("imp.0.ext.tid", 12, 'imp[0].imp.ext is invalid: expects " or n, but found 1'),
    ("imp.0.ext.gpid", {}, 'imp[0].imp.ext is invalid: expects " or n, but found {'),
    ("imp.1.ext.tid", 12, 'imp[1].imp.ext is invalid: expects " or n, but found 1'),
]


@pytest.mark.parametrize(("path", "value", "expected"), EXT_ROWS, ids=[f"{r[0]}={r[1]!r}" for r in EXT_ROWS])
def test_exts_convert_up_reads(path, value, expected):
    assert request_type_error(with_value(path, value)) == expected


# (request, text): which fault PBS-Go meets first, and what the faults after it do to the text
ORDER_ROWS: list[tuple[str, dict[str, Any], str | None]] = [
    (
        "first-in-document-wins",
        {"id": "r", "device": {"w": "x"}, "site": {"page": 12}},
        f"cannot unmarshal openrtb2.Device.W: unexpected character: {FF}",
    ),
    (
        "first-in-document-wins-swapped",
        {"id": "r", "site": {"page": 12}, "device": {"w": "x"}},
        'cannot unmarshal openrtb2.Site.Page: expects " or n, but found 1',
    ),
    (
        "typed-body-before-ext-even-when-later",
        {"id": "r", "ext": {"prebid": "x"}, "tmax": "x"},
        f"cannot unmarshal openrtb2.BidRequest.TMax: unexpected character: {FF}",
    ),
    (
        "convert-up-order-not-document-order",
        {"id": "r", "user": {"ext": {"consent": 1}}, "regs": {"ext": {"gdpr": "x"}}},
        "req.regs.ext is invalid: gdpr must be an integer",
    ),
    (
        "request-ext-before-imp-ext",
        {"id": "r", "imp": [{"id": "i", "ext": "x"}], "ext": "x"},
        'req.ext is invalid: expect { or n, but found "',
    ),
    (
        "ext-prebid-before-ext-schain",
        {"id": "r", "ext": {"schain": {"ver": 1}, "prebid": {"debug": 1}}},
        "req.ext is invalid: cannot unmarshal openrtb_ext.ExtRequestPrebid.Debug: expect t or f, but found 1",
    ),
    (
        "imp-ext-keys-in-pbs-order",
        {"id": "r", "imp": [{"id": "i", "ext": {"gpid": 1, "tid": 2, "data": 3}}]},
        "imp[0].imp.ext is invalid: expect { or n, but found 3",
    ),
    (
        "imp-ext-tid-before-gpid",
        {"id": "r", "imp": [{"id": "i", "ext": {"gpid": 1, "tid": 2}}]},
        'imp[0].imp.ext is invalid: expects " or n, but found 2',
    ),
    (
        "user-ext-keys-in-pbs-order",
        {"id": "r", "user": {"ext": {"eids": 1, "prebid": 2, "consent": 3}}},
        'req.user.ext is invalid: expects " or n, but found 3',
    ),
    (
        "later-imp",
        {"id": "r", "imp": [{"id": "a", "ext": {}}, {"id": "b", "ext": {"gpid": 1}}]},
        'imp[1].imp.ext is invalid: expects " or n, but found 1',
    ),
    # json-iterator reads on after an error: a one-character value leaves a comma next, so the next
    # field is decoded too and its decoder adds its name, which moves "cannot unmarshal <name>"
    (
        "one-char-id-then-imp",
        {"id": 5, "imp": [{"id": "i"}]},
        'cannot unmarshal ID: expects " or n, but found 5',
    ),
    (
        "one-char-banner-then-video",
        {"id": "r", "imp": [{"id": "1", "banner": 5, "video": {}}]},
        "cannot unmarshal Banner: expect { or n, but found 5",
    ),
    (
        "two-char-banner-then-video",
        {"id": "r", "imp": [{"id": "1", "banner": 55, "video": {}}]},
        "cannot unmarshal openrtb2.Imp.Banner: expect { or n, but found 5",
    ),
    # keys match struct fields ignoring case
    ("case-id", {"ID": 12}, 'cannot unmarshal openrtb2.BidRequest.ID: expects " or n, but found 1'),
    (
        "case-imp",
        {"id": "r", "Imp": {}},
        "cannot unmarshal openrtb2.BidRequest.Imp: decode slice: expect [ or n, but found {",
    ),
    ("case-ext", {"id": "r", "EXT": "x"}, 'req.ext is invalid: expect { or n, but found "'),
    (
        "case-imp-ext",
        {"id": "r", "IMP": [{"id": "i", "Ext": {"tid": 1}}]},
        'imp[0].imp.ext is invalid: expects " or n, but found 1',
    ),
    ("case-last-wins", {"id": "r", "EXT": "x", "ext": {}}, None),
    (  # auction_test.go TestValidateRequestExt "valid multibid"
        "case-multibid-valid",
        {"id": "r", "ext": {"prebid": {"multibid": [{"Bidder": "pubmatic", "MaxBids": 2}]}}},
        None,
    ),
    ("ext-map-keys-are-exact", {"id": "r", "user": {"ext": {"Consent": 1}}}, None),
    # null is taken for every kind
    (
        "nulls",
        {
            "id": None,
            "imp": [None, {"id": "i", "banner": None, "bidfloor": None, "secure": None, "ext": None}],
            "site": None,
            "device": {"w": None, "geo": None},
            "test": None,
            "cur": [None],
            "ext": None,
            "regs": {"ext": {"gdpr": None, "us_privacy": None}},
            "user": {"ext": {"consent": None, "eids": None}},
        },
        None,
    ),
]


@pytest.mark.parametrize(("request_", "expected"), [r[1:] for r in ORDER_ROWS], ids=[r[0] for r in ORDER_ROWS])
def test_order_continuation_case_and_null(request_, expected):
    assert request_type_error(request_) == expected


def _real_client_requests() -> list[dict[str, Any]]:
    requests: list[dict[str, Any]] = []
    if (REAL_CLIENTS / "prebidjs-auction-request.json").exists():
        requests.append(orjson.loads((REAL_CLIENTS / "prebidjs-auction-request.json").read_bytes()))
        for line in (REAL_CLIENTS / "requests.jsonl").read_text().splitlines():
            record = orjson.loads(line)
            if record["url"].startswith("/openrtb2/auction"):
                requests.append(orjson.loads(record["body"]))
    return requests


VALID = [orjson.loads(path.read_bytes()) for path in sorted((REPO / "bench" / "payloads").glob("auction*.json"))]


@pytest.mark.parametrize("request_", VALID + _real_client_requests())
def test_valid_requests_pass(request_):
    assert request_type_error(request_) is None
    assert site_ext_error(request_) is None
    assert app_ext_error(request_) is None
    assert device_ext_error(request_) is None
    assert imp_ext_prebid_error(request_) is None


def test_real_client_requests_present():
    """The real-client captures are checked when shared/ is beside the repo, as in CI."""
    if not REAL_CLIENTS.exists():
        pytest.skip(f"no {REAL_CLIENTS}")
    assert len(_real_client_requests()) >= 3


# (body, text): a body json-iterator cannot decode into a BidRequest at all
BODY_ROWS: list[tuple[bytes, str | None]] = [
    (b"malformed", "expect { or n, but found m"),  # malformed-bid-request.json
    (b"[1]", "expect { or n, but found ["),
    (b"", "expect { or n, but found \x00"),
    (b"null", None),  # PBS-Go goes on with an empty request
    (b'{"id":"x"} x', "there are bytes left after unmarshal"),
    (b'{"id":"x"', "expect }, but found \x00"),
    (b'{"id":"x",}', 'expects " or n, but found }'),
    (b"{invalid json}", 'expects " or n, but found i'),
    (b'{"imp":[{"banner":nul}]}', "cannot unmarshal openrtb2.Imp.Banner: expect ull"),  # merge_test.go
    (
        b'{"imp":[{"iframeBuster":malformed}]}',
        "cannot unmarshal openrtb2.Imp.IframeBuster: decode slice: expect [ or n, but found m",
    ),
    (b'{"imp":[{"banner":malformed}]}', "cannot unmarshal openrtb2.Imp.Banner: expect { or n, but found m"),
    (b'{"tmax":99999999999999999999}', "cannot unmarshal openrtb2.BidRequest.TMax: overflow"),
    (  # strconv's error is not json-iterator's ReportError: no ", error found in #", the whole stack stays
        b'{"imp":[{"bidfloor":1e999}]}',
        'openrtb2.BidRequest.Imp: []openrtb2.Imp: openrtb2.Imp.BidFloor: strconv.ParseFloat: parsing "1e999": value '
        "out of range",
    ),
    (b'{"ext":{"a":01}}', "cannot unmarshal openrtb2.BidRequest.Ext: leading zero is invalid"),
    (b'{"ext":{"a":1.}}', "cannot unmarshal openrtb2.BidRequest.Ext: missing digit after dot"),
    (b'{"ext":{"a":1.2.3}}', "cannot unmarshal openrtb2.BidRequest.Ext: more than one dot found in number"),
    (b'{"id":"\\x"}', "cannot unmarshal openrtb2.BidRequest.ID: invalid escape char after \\"),
    (
        b'{"id":"\xff"}',
        "invalid JSON at byte 0: str is not valid UTF-8: surrogates not allowed",
    ),  # json-iterator takes it
]


@pytest.mark.parametrize(("body", "expected"), BODY_ROWS, ids=[repr(r[0])[:40] for r in BODY_ROWS])
def test_body_syntax_error(body, expected):
    assert body_syntax_error(body) == expected


# (site, text): validateSite's ext part
SITE_ROWS: list[tuple[Any, str | None]] = [
    ({"page": "p", "ext": "x"}, 'expect { or n, but found "'),
    ({"page": "p", "ext": {"amp": 2}}, "request.site.ext.amp must be either 1, 0, or undefined"),  # site-ext-amp.json
    ({"page": "p", "ext": {"amp": "1"}}, "request.site.ext.amp must be either 1, 0, or undefined"),
    ({"page": "p", "ext": {"amp": 1.0}}, "request.site.ext.amp must be either 1, 0, or undefined"),
    ({"page": "p", "ext": {"amp": -1}}, "request.site.ext.amp must be either 1, 0, or undefined"),
    ({"page": "p", "ext": {"amp": 1}}, None),
    ({"page": "p", "ext": {"amp": 0}}, None),
    ({"page": "p", "ext": {"amp": None}}, None),
    ({"page": "p", "ext": {"AMP": 5}}, None),  # a Go map key: exact
    ({"page": "p", "EXT": {"amp": 5}}, "request.site.ext.amp must be either 1, 0, or undefined"),  # a struct field
    (None, None),
]


@pytest.mark.parametrize(("site", "expected"), SITE_ROWS)
def test_site_ext_error(site, expected):
    assert site_ext_error({"id": "r", "site": site}) == expected


# (app, text): validateApp's GetAppExt, no prefix
APP_ROWS: list[tuple[Any, str | None]] = [
    (  # invalid-source.json
        {"ext": {"prebid": {"source": {"foo": "prebid-mobile"}, "version": "1.0"}}},
        'cannot unmarshal openrtb_ext.ExtAppPrebid.Source: expects " or n, but found {',
    ),
    (
        {"ext": {"prebid": {"version": 1}}},
        'cannot unmarshal openrtb_ext.ExtAppPrebid.Version: expects " or n, but found 1',
    ),
    ({"ext": []}, "expect { or n, but found ["),
    ({"ext": {"prebid": {"source": "prebid-mobile", "version": "1.0"}}}, None),
]


@pytest.mark.parametrize(("app", "expected"), APP_ROWS)
def test_app_ext_error(app, expected):
    assert app_ext_error({"id": "r", "app": app}) == expected


WIDTH = "request.device.ext.prebid.interstitial.minwidthperc must be a number between 0 and 100"
HEIGHT = "request.device.ext.prebid.interstitial.minheightperc must be a number between 0 and 100"

# (device.ext, text): GetDeviceExt, with ExtDeviceInt's own texts (openrtb_ext/device_test.go)
DEVICE_ROWS: list[tuple[Any, str | None]] = [
    ({"prebid": {"interstitial": {"minheightperc": 0}}}, WIDTH),
    ({"prebid": {"interstitial": {"minwidthperc": 105}}}, WIDTH),
    ({"prebid": {"interstitial": {"minwidthperc": True, "minheightperc": 0}}}, WIDTH),
    ({"prebid": {"interstitial": {"minwidthperc": None, "minheightperc": 0}}}, WIDTH),
    ({"prebid": {"interstitial": {"minwidthperc": "75", "minheightperc": 0}}}, WIDTH),
    ({"prebid": {"interstitial": {"minwidthperc": 50.5, "minheightperc": 0}}}, WIDTH),
    ({"prebid": {"interstitial": {"minwidthperc": 120, "minheightperc": 60}}}, WIDTH),  # interstital-bad-perc.json
    ({"prebid": {"interstitial": {"minwidthperc": 50, "minheightperc": -1}}}, HEIGHT),
    ({"prebid": {"interstitial": "x"}}, WIDTH),
    ({"prebid": {"interstitial": None}}, None),
    ({"prebid": {"interstitial": {"minwidthperc": 50, "minheightperc": 60}}}, None),
    ({"prebid": "x"}, 'expect { or n, but found "'),
    ({"cdep": 1}, 'expects " or n, but found 1'),
    ({"atts": "x"}, None),  # read leniently elsewhere
    (5, "expect { or n, but found 5"),
]


@pytest.mark.parametrize(("ext", "expected"), DEVICE_ROWS)
def test_device_ext_error(ext, expected):
    assert device_ext_error({"id": "r", "device": {"ua": "UA", "ext": ext}}) == expected


# (native request payload, text): fillAndValidateNative's decode into native1 request.Request
NATIVE_ROWS: list[tuple[Any, str | None]] = [
    ({"ver": 1.2}, 'cannot unmarshal request.Request.Ver: expects " or n, but found 1'),
    ({"context": 1.5}, "cannot unmarshal request.Request.Context: can not decode float as int"),
    ({"plcmttype": "x"}, f"cannot unmarshal request.Request.PlcmtType: unexpected character: {FF}"),
    ({"aurlsupport": 300}, "cannot unmarshal ReadInt8: 300"),
    ({"assets": {}}, "cannot unmarshal request.Request.Assets: decode slice: expect [ or n, but found {"),
    ({"assets": [{"id": "1"}]}, f"cannot unmarshal request.Asset.ID: unexpected character: {FF}"),
    (
        {"assets": [{"id": 1, "title": {"len": "80"}}]},
        f"cannot unmarshal request.Title.Len: unexpected character: {FF}",
    ),
    ({"assets": [{"id": 1, "img": {"w": "300"}}]}, f"cannot unmarshal request.Image.W: unexpected character: {FF}"),
    (
        {"assets": [{"id": 1, "img": {"mimes": "image/png"}}]},
        'cannot unmarshal request.Image.MIMEs: decode slice: expect [ or n, but found "',
    ),
    ({"assets": [{"id": 1, "video": {"mimes": [1]}}]}, 'cannot unmarshal []string: expects " or n, but found 1'),
    ({"assets": [{"id": 1, "data": {"type": "x"}}]}, f"cannot unmarshal request.Data.Type: unexpected character: {FF}"),
    (
        {"eventtrackers": [{"methods": ["1"]}]},
        f"cannot unmarshal []native1.EventTrackingMethod: unexpected character: {FF}",
    ),
    ("x", 'expect { or n, but found "'),
    (None, None),
    ({"ver": "1.2", "assets": [{"id": 1, "required": 1, "title": {"len": 80}}]}, None),
]


@pytest.mark.parametrize(("payload", "expected"), NATIVE_ROWS)
def test_native_request_type_error(payload, expected):
    assert native_request_type_error(payload) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{", 'expects " or n, but found \x00'),
        ('{"ver":"1.2"', "expect }, but found \x00"),
        ('{"ver":"1.2"}', None),
    ],
)
def test_native_request_text_error(text, expected):
    assert native_request_text_error(text) == expected


# (imp.ext.prebid, text): PBS-Go's parseImpInfo, before anything else
IMP_INFO_ROWS: list[tuple[Any, str | None]] = [
    (  # valid-whole/supplementary/imp-info-invalid.json (auction_test.go TestParseRequestParseImpInfoError)
        {"storedrequest": {"id": "1"}, "options": {"echovideoattrs": "true"}},
        'cannot unmarshal openrtb_ext.Options.EchoVideoAttrs: expect t or f, but found "',
    ),
    ({"storedrequest": {"id": 12}}, 'cannot unmarshal openrtb_ext.ExtStoredRequest.ID: expects " or n, but found 1'),
    (
        {"storedbidresponse": [{"replaceimpid": "true"}]},
        'cannot unmarshal openrtb_ext.ExtStoredBidResponse.ReplaceImpId: expect t or f, but found "',
    ),
    ("x", "expect { or n, but found x"),  # jsonparser hands over a string's content
    ("{}", None),
    ("", "expect { or n, but found \x00"),
    (5, "expect { or n, but found 5"),
    (None, None),
    ({"bidder": {"appnexus": {"placementId": 1}}}, None),
]


@pytest.mark.parametrize(("prebid", "expected"), IMP_INFO_ROWS)
def test_imp_ext_prebid_error(prebid, expected):
    request = {"id": "r", "imp": [{"id": "a", "ext": {}}, {"id": "b", "ext": {"prebid": prebid}}]}
    assert imp_ext_prebid_error(request) == expected


# util/jsonutil/jsonutil_test.go TestTryExtractErrorMessage, verbatim
EXTRACT_ROWS: list[tuple[str, bytes, bytes]] = [
    (
        "level-1",
        b"readObjectStart: expect { or n, but found m, error found in #1 byte of ...|malformed|..., bigger context "
        b"...|malformed|..",
        b"expect { or n, but found m",
    ),
    (
        "level-2",
        b"openrtb_ext.ExtRequestPrebidCache.Bids: readObjectStart: expect { or n, but found t, error found in #10 "
        b'byte of ...|:{"bids":true}}|..., bigger context ...|{"cache":{"bids":true}}|...',
        b"cannot unmarshal openrtb_ext.ExtRequestPrebidCache.Bids: expect { or n, but found t",
    ),
    (
        "level-3+",
        b"openrtb_ext.ExtRequestPrebid.Cache: openrtb_ext.ExtRequestPrebidCache.Bids: readObjectStart: expect { or "
        b"n, but found t, error found in #10 byte of "
        b'...|:{"bids":true}}|..., bigger context ...|{"cache":{"bids":true}}|...',
        b"cannot unmarshal openrtb_ext.ExtRequestPrebidCache.Bids: expect { or n, but found t",
    ),
    (
        "error-msg",
        b'Skip: do not know how to skip: 109, error found in #10 byte of ...|prebid": malformed}|..., bigger context '
        b'...|{"prebid": malformed}|...',
        b"do not know how to skip: 109",
    ),
    (
        "specific",
        b"openrtb_ext.ExtDevicePrebid.Interstitial: unmarshalerDecoder: "
        b"request.device.ext.prebid.interstitial.minwidthperc must be a number between 0 and 100, error found in "
        b"#10 byte of ...|         }\n        }|..., bigger context "
        b'...|: 120,\n            "minheightperc": 60\n          }\n        }|...',
        b"request.device.ext.prebid.interstitial.minwidthperc must be a number between 0 and 100",
    ),
    ("normal", b"normal error message", b"normal error message"),
    ("norma-false-start", b"false: normal error message", b"false: normal error message"),
    (
        "norma-false-end",
        b"normal error message, error found in #10 but doesn't follow format",
        b"normal error message, error found in #10 but doesn't follow format",
    ),
]


@pytest.mark.parametrize(("error", "expected"), [r[1:] for r in EXTRACT_ROWS], ids=[r[0] for r in EXTRACT_ROWS])
def test_extract_message_pbs_vectors(error, expected):
    assert extract_message(error) == expected
