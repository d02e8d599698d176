"""Every auction-request rule of PBS-Go's ``validateRequest``/``ValidateImp`` (and what runs before them:
the typed unmarshal, ``processInterstitials``), one row each, with PBS-Go's exact 400 text and order.

Sources: PBS-Go ``endpoints/openrtb2/auction.go`` (validateRequest, validateAliases,
validateAliasesGVLIDs, validateBidAdjustmentFactors, validateEidPermissions, validateRequestExt,
validateTargeting, validatePriceGranularity, validateSite, validateApp, validateDOOH, validateUser,
validateEIDs, validateUIDs, validateRegs, validateDevice, validateExactlyOneInventoryType,
validateOrFillChannel), ``endpoints/openrtb2/interstitial.go``, ``ortb/request_validator*.go``,
``currency/validation.go`` and the texts of ``endpoints/openrtb2/sample-requests/invalid-whole``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from hbserver.adapters.params import validate_params
from hbserver.auction.common.request_error import RequestError, refusal_text
from hbserver.auction.core import _size_interstitials
from hbserver.auction.request.ortb import upconvert
from hbserver.auction.request.ortb_types import request_type_error
from hbserver.auction.request.validate import Validated, validate_request
from hbserver.bidders.registry import build_registry
from tests.auction.helpers import bid, bidder_config
from tests.conftest import make_config

REGISTRY = build_registry(make_config(adapters={"off": {"alias_of": "generic", "disabled": True}}))


def base() -> dict[str, Any]:
    return {
        "id": "req-1",
        "site": {"page": "https://news.example/a"},
        "imp": [
            {
                "id": "imp-1",
                "banner": {"format": [{"w": 300, "h": 250}]},
                "ext": {"prebid": {"bidder": {"appnexus": {"placementId": 1}}}},
            }
        ],
        "ext": {"prebid": {}},
    }


def run(request: dict[str, Any]) -> Validated:
    """What the auction does before the exchange: typed unmarshal, upconvert, interstitials, validation."""
    problem = request_type_error(request)
    if problem is not None:
        raise RequestError(problem)
    request = upconvert(request)
    _size_interstitials(request)
    return validate_request(request, REGISTRY, validate_params)


def refused(request: dict[str, Any]) -> str:
    with pytest.raises(RequestError) as caught:
        run(request)
    return refusal_text(caught.value)


Mutation = Callable[[dict[str, Any]], Any]


def imp0(r: dict[str, Any]) -> dict[str, Any]:
    return r["imp"][0]


def prebid(r: dict[str, Any]) -> dict[str, Any]:
    return r["ext"]["prebid"]


def banner_field(key: str, value: Any) -> Mutation:
    return lambda r: imp0(r)["banner"].update({key: value})


def format_field(key: str, value: Any) -> Mutation:
    return lambda r: imp0(r)["banner"]["format"][0].update({key: value})


def media(kind: str, **fields: Any) -> Mutation:
    return lambda r: imp0(r).update({kind: fields})


def native_imp(payload: str) -> Mutation:
    return lambda r: imp0(r).update(banner=None, native={"request": payload})


# (id, mutation, PBS-Go's text)
ROWS: list[tuple[str, Mutation, str]] = [
    # --- request ------------------------------------------------------------------------------
    ("id-missing", lambda r: r.pop("id"), 'request missing required field: "id"'),
    ("id-empty", lambda r: r.update(id=""), 'request missing required field: "id"'),
    ("tmax-negative", lambda r: r.update(tmax=-2), "request.tmax must be nonnegative. Got -2"),
    ("imp-missing", lambda r: r.pop("imp"), "request.imp must contain at least one element."),
    ("imp-empty", lambda r: r.update(imp=[]), "request.imp must contain at least one element."),
    # --- ext.prebid, in PBS-Go's order -------------------------------------------------------
    ("alias-no-op", lambda r: prebid(r).update(aliases={"appnexus": "appnexus"}),
     "request.ext.prebid.aliases.appnexus defines a no-op alias. Choose a different alias, or remove this entry."),
    ("alias-no-op-case", lambda r: prebid(r).update(aliases={"appnexus": "AppNexus"}),
     "request.ext.prebid.aliases.appnexus defines a no-op alias. Choose a different alias, or remove this entry."),
    ("alias-unknown-core", lambda r: prebid(r).update(aliases={"unknown": "other-unknown"}),
     "request.ext.prebid.aliases.unknown refers to unknown bidder: other-unknown"),
    ("alias-unknown-self", lambda r: prebid(r).update(aliases={"nobody": "nobody"}),
     "request.ext.prebid.aliases.nobody refers to unknown bidder: nobody"),
    ("alias-disabled-core", lambda r: prebid(r).update(aliases={"x": "off"}),
     "request.ext.prebid.aliases.x refers to disabled bidder: off"),
    ("aliasgvlids-unknown-alias", lambda r: prebid(r).update(aliasgvlids={"nope": 12}),
     "request.ext.prebid.aliasgvlids. vendorId 12 refers to unknown bidder alias: nope"),
    ("aliasgvlids-zero", lambda r: prebid(r).update(aliases={"g": "appnexus"}, aliasgvlids={"g": 0}),
     "request.ext.prebid.aliasgvlids. Invalid vendorId 0 for alias: g. "
     "Choose a different vendorId, or remove this entry."),
    ("adjustment-negative", lambda r: prebid(r).update(bidadjustmentfactors={"appnexus": -2}),
     "request.ext.prebid.bidadjustmentfactors.appnexus must be a positive number. Got -2.000000"),
    ("adjustment-zero", lambda r: prebid(r).update(bidadjustmentfactors={"appnexus": 0}),
     "request.ext.prebid.bidadjustmentfactors.appnexus must be a positive number. Got 0.000000"),
    ("adjustment-unknown", lambda r: prebid(r).update(bidadjustmentfactors={"unknown": 1.1}),
     "request.ext.prebid.bidadjustmentfactors.unknown is not a known bidder or alias"),
    ("adjustment-case-twice", lambda r: prebid(r).update(bidadjustmentfactors={"appnexus": 1.1, "APPNEXUS": 1.2}),
     "cannot have multiple bidders that differ only in case style"),
    ("eidpermissions-no-source", lambda r: prebid(r).update(data={"eidpermissions": [{"bidders": ["appnexus"]}]}),
     'request.ext.prebid.data.eidpermissions[0] missing required field: "source"'),
    ("eidpermissions-duplicate", lambda r: prebid(r).update(data={"eidpermissions": [
        {"source": "s", "bidders": ["appnexus"]}, {"source": "s", "bidders": ["appnexus"]}]}),
     'request.ext.prebid.data.eidpermissions[1] duplicate entry with field: "source"'),
    ("eidpermissions-no-bidders", lambda r: prebid(r).update(data={"eidpermissions": [{"source": "s", "bidders": []}]}),
     'request.ext.prebid.data.eidpermissions[0] missing or empty required field: "bidders"'),
    ("eidpermissions-unknown",
     lambda r: prebid(r).update(data={"eidpermissions": [{"source": "s", "bidders": ["zz"]}]}),
     'request.ext.prebid.data.eidpermissions[0] contains unrecognized bidder "zz"'),
    ("eidpermissions-wildcard-mixed",
     lambda r: prebid(r).update(data={"eidpermissions": [{"source": "s", "bidders": ["*", "appnexus"]}]}),
     'request.ext.prebid.data.eidpermissions[0] contains bidder wildcard "*" mixed with specific bidders'),
    ("currency-code-from", lambda r: prebid(r).update(currency={"rates": {"FOO": {"USD": 1.0}}}),
     "currency code FOO is not recognized or malformed"),
    ("currency-code-to", lambda r: prebid(r).update(currency={"rates": {"EUR": {"USD": 1.0, "BAR": 2.0}}}),
     "currency code BAR is not recognized or malformed"),
    ("channel-empty", lambda r: prebid(r).update(channel={"name": ""}), "ext.prebid.channel.name can't be empty"),
    # --- inventory ---------------------------------------------------------------------------
    ("no-inventory", lambda r: r.pop("site"), "One of request.site or request.app or request.dooh must be defined"),
    ("site-and-app", lambda r: r.update(app={"id": "a"}),
     "No more than one of request.site or request.app or request.dooh can be defined"),
    ("site-and-dooh", lambda r: r.update(dooh={"id": "d"}),
     "No more than one of request.site or request.app or request.dooh can be defined"),
    # --- validateRequestExt ------------------------------------------------------------------
    ("cache-nothing", lambda r: prebid(r).update(cache={}),
     'request.ext is invalid: request.ext.prebid.cache requires one of the "bids" or "vastxml" properties'),
    ("granularity-increment", lambda r: prebid(r).update(targeting={"pricegranularity": {
        "precision": 2, "ranges": [{"max": 5, "increment": -1}]}}),
     "Price granularity error: increment must be a nonzero positive number"),
    ("granularity-order", lambda r: prebid(r).update(targeting={"pricegranularity": {
        "precision": 2, "ranges": [{"max": 5, "increment": 1}, {"max": 2, "increment": 1}]}}),
     'Price granularity error: range list must be ordered with increasing "max"'),
    ("granularity-precision", lambda r: prebid(r).update(targeting={"pricegranularity": {
        "precision": -1, "ranges": [{"max": 5, "increment": 1}]}}),
     "Price granularity error: precision must be non-negative"),
    ("mediatype-granularity", lambda r: prebid(r).update(targeting={"mediatypepricegranularity": {
        "video": {"precision": 2, "ranges": [{"max": 5, "increment": 0}]}}}),
     "Price granularity error: increment must be a nonzero positive number"),
    # --- site / app / dooh -------------------------------------------------------------------
    ("site-empty", lambda r: r.update(site={}),
     "request.site should include at least one of request.site.id or request.site.page."),
    ("site-amp", lambda r: r.update(site={"page": "p", "ext": {"amp": 2}}),
     "request.site.ext.amp must be either 1, 0, or undefined"),
    ("dooh-empty", lambda r: (r.pop("site"), r.update(dooh={"name": "screen"})),
     "request.dooh should include at least one of request.dooh.id or request.dooh.venuetype."),
    # --- user --------------------------------------------------------------------------------
    ("user-geo-accuracy", lambda r: r.update(user={"geo": {"accuracy": -1}}),
     "request.user.geo.accuracy must be a positive number"),
    ("buyeruids-empty", lambda r: r.update(user={"ext": {"prebid": {"buyeruids": {}}}}),
     'request.user.ext.prebid requires a "buyeruids" property with at least one ID defined. '
     "If none exist, then request.user.ext.prebid should not be defined."),
    ("user-ext-prebid-empty", lambda r: r.update(user={"ext": {"prebid": {}}}),
     'request.user.ext.prebid requires a "buyeruids" property with at least one ID defined. '
     "If none exist, then request.user.ext.prebid should not be defined."),
    ("buyeruids-unknown", lambda r: r.update(user={"ext": {"prebid": {"buyeruids": {"unknown": "123"}}}}),
     "request.user.ext.unknown is neither a known bidder name nor an alias in request.ext.prebid.aliases"),
    # --- regs / device -----------------------------------------------------------------------
    ("regs-gdpr", lambda r: r.update(regs={"gdpr": 2}), "request.regs.gdpr must be either 0 or 1"),
    ("regs-ext-gdpr", lambda r: r.update(regs={"ext": {"gdpr": 2}}), "request.regs.gdpr must be either 0 or 1"),
    ("device-w", lambda r: r.update(device={"w": -1}), "request.device.w must be a positive number"),
    ("device-h", lambda r: r.update(device={"h": -1}), "request.device.h must be a positive number"),
    ("device-ppi", lambda r: r.update(device={"ppi": -1}), "request.device.ppi must be a positive number"),
    ("device-geo-accuracy", lambda r: r.update(device={"geo": {"accuracy": -1}}),
     "request.device.geo.accuracy must be a positive number"),
    # --- imp ---------------------------------------------------------------------------------
    ("imp-id-missing", lambda r: imp0(r).pop("id"), 'request.imp[0] missing required field: "id"'),
    ("imp-metric", lambda r: imp0(r).update(metric=[{"type": "viewability", "value": 0.5}]),
     "request.imp[0].metric is not yet supported by prebid-server. Support may be added in the future"),
    ("imp-no-media", lambda r: imp0(r).pop("banner"),
     'request.imp[0] must contain at least one of "banner", "video", "audio", or "native"'),
    # banner
    ("banner-w-negative", banner_field("w", -1), "request.imp[0].banner.w must be a positive number"),
    ("banner-h-negative", banner_field("h", -1), "request.imp[0].banner.h must be a positive number"),
    *[(f"banner-{key}", banner_field(key, 1),
       f'request.imp[0].banner uses unsupported property: "{key}". Use the "format" array instead.')
      for key in ("wmin", "wmax", "hmin", "hmax")],
    ("banner-no-size", lambda r: imp0(r).update(banner={}),
     'request.imp[0].banner has no sizes. Define "w" and "h", or include "format" elements.'),
    ("banner-w-only", lambda r: imp0(r).update(banner={"w": 300}),
     'request.imp[0].banner has no sizes. Define "w" and "h", or include "format" elements.'),
    ("banner-format-empty", lambda r: imp0(r).update(banner={"format": []}),
     'request.imp[0].banner has no sizes. Define "w" and "h", or include "format" elements.'),
    *[(f"format-{key}-negative", format_field(key, -1),
       f"request.imp[0].banner.format[0].{key} must be a positive number")
      for key in ("w", "h", "wratio", "hratio", "wmin")],
    ("format-empty-object", lambda r: imp0(r)["banner"].update(format=[{}]),
     "Request imp[0].banner.format[0] should define *either* {w, h} (for static size requirements) *or* "
     "{wmin, wratio, hratio} (for flexible sizes) to be non-zero."),
    ("format-both", lambda r: imp0(r)["banner"].update(format=[{"w": 300, "h": 250, "wmin": 50}]),
     "Request imp[0].banner.format[0] should define *either* {w, h} *or* {wmin, wratio, hratio}, but not both. "
     'If both are valid, send two "format" objects in the request.'),
    ("format-no-height", lambda r: imp0(r)["banner"].update(format=[{"w": 300}]),
     'Request imp[0].banner.format[0] must define non-zero "h" and "w" properties.'),
    ("format-no-hratio", lambda r: imp0(r)["banner"].update(format=[{"wmin": 50, "wratio": 2}]),
     'Request imp[0].banner.format[0] must define non-zero "wmin", "wratio", and "hratio" properties.'),
    ("format-second", lambda r: imp0(r)["banner"]["format"].append({"w": 728}),
     'Request imp[0].banner.format[1] must define non-zero "h" and "w" properties.'),
    # video
    ("video-empty", lambda r: imp0(r).update(video={}),
     "request.imp[0].video.mimes must contain at least one supported MIME type"),
    ("video-mimes-empty", lambda r: imp0(r).update(video={"mimes": []}),
     "request.imp[0].video.mimes must contain at least one supported MIME type"),
    *[(f"video-{key}-negative", media("video", mimes=["video/mp4"], **{key: -1}),
       f"request.imp[0].video.{key} must be a positive number") for key in ("w", "h", "minbitrate", "maxbitrate")],
    # audio
    ("audio-mimes-empty", lambda r: imp0(r).update(audio={"mimes": []}),
     "request.imp[0].audio.mimes must contain at least one supported MIME type"),
    *[(f"audio-{key}-negative", media("audio", mimes=["audio/mp4"], **{key: -1}),
       f"request.imp[0].audio.{key} must be a positive number")
      for key in ("sequence", "maxseq", "minbitrate", "maxbitrate")],
    # native (the payload's own rules are tests/auction/test_native.py)
    ("native-empty", lambda r: imp0(r).update(native={}),
     'request.imp[0].native missing required property "request"'),
    ("native-no-assets", native_imp("{}"),
     "request.imp[0].native.request.assets must be an array containing at least one object"),
    # pmp
    ("deal-no-id", lambda r: imp0(r).update(pmp={"deals": [{"bidfloor": 1}]}),
     'request.imp[0].pmp.deals[0] missing required field: "id"'),
    ("deal-second-no-id", lambda r: imp0(r).update(pmp={"deals": [{"id": "d1"}, {"id": ""}]}),
     'request.imp[0].pmp.deals[1] missing required field: "id"'),
    # imp.ext
    ("imp-ext-missing", lambda r: imp0(r).pop("ext"), "request.imp[0].ext is required"),
    ("imp-ext-empty", lambda r: imp0(r).update(ext={}),
     "request.imp[0].ext.prebid.bidder must contain at least one bidder"),
    ("imp-ext-prebid-bidder-empty", lambda r: imp0(r).update(ext={"prebid": {"bidder": {}}}),
     "request.imp[0].ext.prebid.bidder must contain at least one bidder"),
    ("imp-ext-only-unknown", lambda r: imp0(r).update(ext={"prebid": {"bidder": {"unknown": {}}}}),
     "request.imp[0].ext.prebid.bidder must contain at least one bidder"),
    ("imp-ext-params-type", lambda r: imp0(r)["ext"]["prebid"]["bidder"].update(appnexus="x"),
     "request.imp[0].ext.prebid.bidder.appnexus failed validation.\n"
     "(root): Invalid type. Expected: object, given: string"),
    ("imp-ext-params-field", lambda r: imp0(r)["ext"]["prebid"]["bidder"].update(appnexus={"placementId": [1]}),
     "request.imp[0].ext.prebid.bidder.appnexus failed validation.\n"
     "placementId: Invalid type. Expected: [integer,string], given: array"),
    # interstitial (processInterstitials, before validation)
    ("interstitial-bad-perc", lambda r: (imp0(r).update(instl=1), r.update(device={"w": 320, "h": 640, "ext": {
        "prebid": {"interstitial": {"minwidthperc": 101, "minheightperc": 60}}}})),
     "request.device.ext.prebid.interstitial.minwidthperc must be a number between 0 and 100"),
    ("interstitial-bad-height-perc", lambda r: (imp0(r).update(instl=1), r.update(device={"w": 320, "h": 640, "ext": {
        "prebid": {"interstitial": {"minwidthperc": 50, "minheightperc": "60"}}}})),
     "request.device.ext.prebid.interstitial.minheightperc must be a number between 0 and 100"),
    ("interstitial-empty", lambda r: (imp0(r).update(id="my-imp-id", instl=1, banner={"format": [{"w": 1, "h": 1}]}),
                                      r.update(device={"ext": {"prebid": {"interstitial": {
                                          "minwidthperc": 60, "minheightperc": 60}}}})),
     "Unable to set interstitial size list for Imp id=my-imp-id (No valid sizes between 0x0 and 0x0)"),
]


@pytest.mark.parametrize(("mutate", "text"), [pytest.param(m, t, id=i) for i, m, t in ROWS])
def test_each_rule_gets_pbs_go_text(mutate: Mutation, text: str) -> None:
    request = base()
    mutate(request)
    assert refused(request) == f"Invalid request: {text}\n"


def test_the_base_request_is_valid() -> None:
    validated = run(base())
    assert list(validated.bidders) == ["appnexus"]


# Several faults: the first in PBS-Go's order is reported, with the warnings PBS-Go collected before it
ORDER_ROWS: list[tuple[str, Mutation, list[str]]] = [
    ("id-before-imp", lambda r: (r.pop("id"), r.update(imp=[])), ['request missing required field: "id"']),
    ("alias-before-inventory", lambda r: (r.pop("site"), prebid(r).update(aliases={"x": "nobody"})),
     ["request.ext.prebid.aliases.x refers to unknown bidder: nobody"]),
    ("disabled-before-unknown-alias", lambda r: prebid(r).update(aliases={"x": "off"}),
     ["request.ext.prebid.aliases.x refers to disabled bidder: off"]),
    ("inventory-before-site", lambda r: r.update(site={}, app={}),
     ["No more than one of request.site or request.app or request.dooh can be defined"]),
    ("cache-before-site", lambda r: (r.update(site={}), prebid(r).update(cache={})),
     ['request.ext is invalid: request.ext.prebid.cache requires one of the "bids" or "vastxml" properties']),
    ("site-before-user", lambda r: r.update(site={}, user={"geo": {"accuracy": -1}}),
     ["request.site should include at least one of request.site.id or request.site.page."]),
    ("user-before-regs", lambda r: r.update(user={"geo": {"accuracy": -1}}, regs={"gdpr": 3}),
     ["request.user.geo.accuracy must be a positive number"]),
    ("regs-before-device", lambda r: r.update(device={"w": -1}, regs={"gdpr": 3}),
     ["request.regs.gdpr must be either 0 or 1"]),
    ("device-before-imp", lambda r: (r.update(device={"w": -1}), imp0(r).pop("id")),
     ["request.device.w must be a positive number"]),
    ("banner-before-video", lambda r: imp0(r).update(banner={}, video={}),
     ['request.imp[0].banner has no sizes. Define "w" and "h", or include "format" elements.']),
    ("video-before-pmp", lambda r: imp0(r).update(video={}, pmp={"deals": [{}]}),
     ["request.imp[0].video.mimes must contain at least one supported MIME type"]),
    ("pmp-before-ext", lambda r: (imp0(r).update(pmp={"deals": [{}]}), imp0(r).pop("ext")),
     ['request.imp[0].pmp.deals[0] missing required field: "id"']),
    ("first-imp-first", lambda r: r["imp"].append({"id": "imp-2"}) or imp0(r).update(banner={}),
     ['request.imp[0].banner has no sizes. Define "w" and "h", or include "format" elements.']),
    # the currency warning comes with a later fatal problem (PBS-Go appends to errL from validateRequestExt on)
    ("currency-warning-then-site", lambda r: r.update(cur=["EUR", "USD"], site={}),
     ["A prebid request can only process one currency. Taking the first currency in the list, EUR, as the active "
      "currency", "request.site should include at least one of request.site.id or request.site.page."]),
    # duplicate imp ids are collected while the imps are still checked
    ("duplicate-then-imp-fault", lambda r: r["imp"].append({**copy.deepcopy(imp0(r)), "banner": {}}),
     ['request.imp[0].id and request.imp[1].id are both "imp-1". Imp IDs must be unique.',
      'request.imp[1].banner has no sizes. Define "w" and "h", or include "format" elements.']),
    ("duplicate-alone", lambda r: r["imp"].append(copy.deepcopy(imp0(r))),
     ['request.imp[0].id and request.imp[1].id are both "imp-1". Imp IDs must be unique.']),
    # EID warnings come before a later fatal problem
    ("eid-warning-then-device", lambda r: r.update(user={"eids": [{"uids": [{"id": "x"}]}]}, device={"h": -1}),
     ["request.user.eids[0] removed due to missing source", "request.device.h must be a positive number"]),
]


@pytest.mark.parametrize(("mutate", "lines"), [pytest.param(m, t, id=i) for i, m, t in ORDER_ROWS])
def test_the_first_fault_in_pbs_go_order_is_reported(mutate: Mutation, lines: list[str]) -> None:
    request = base()
    mutate(request)
    assert refused(request) == "".join(f"Invalid request: {line}\n" for line in lines)


EID_ROWS: list[tuple[str, list[Any], list[Any], list[tuple[int, str]]]] = [
    ("valid", [{"source": "a", "uids": [{"id": "1"}]}], [{"source": "a", "uids": [{"id": "1"}]}], []),
    ("no-source", [{"uids": [{"id": "1"}]}, {"source": "b", "uids": [{"id": "2"}]}],
     [{"source": "b", "uids": [{"id": "2"}]}], [(10013, "request.user.eids[0] removed due to missing source")]),
    ("empty-source", [{"source": "", "uids": [{"id": "1"}]}], None,
     [(10013, "request.user.eids[0] removed due to missing source")]),
    ("no-uids", [{"source": "a"}], None, [(10013, "request.user.eids[0] (source: a) removed due to empty uids")]),
    ("empty-uids", [{"source": "a", "uids": []}], None,
     [(10013, "request.user.eids[0] (source: a) removed due to empty uids")]),
    ("uid-without-id", [{"source": "a", "uids": [{"id": ""}, {"id": "2", "atype": 1}]}],
     [{"source": "a", "uids": [{"id": "2", "atype": 1}]}],
     [(10014, "request.user.eids[0].uids[0] removed due to empty ids")]),
    ("all-uids-empty", [{"source": "a", "uids": [{}, {"id": ""}]}], None,
     [(10014, "request.user.eids[0].uids[0] removed due to empty ids"),
      (10014, "request.user.eids[0].uids[1] removed due to empty ids"),
      (10013, "request.user.eids[0] (source: a) removed due to empty uids")]),
]


@pytest.mark.parametrize(("eids", "kept", "warnings"), [pytest.param(*row[1:], id=row[0]) for row in EID_ROWS])
@pytest.mark.parametrize("place", ["user.eids", "user.ext.eids"])
def test_malformed_eids_are_removed_with_pbs_go_warnings(
    eids: list[Any], kept: list[Any] | None, warnings: list[tuple[int, str]], place: str
) -> None:
    request = base()
    original = copy.deepcopy(eids)
    request["user"] = {"eids": eids} if place == "user.eids" else {"ext": {"eids": eids}}
    validated = run(request)
    assert validated.request["user"].get("eids") == kept if kept is not None else not validated.request["user"]["eids"]
    assert [(w.code, w.message) for w in validated.warnings] == warnings
    assert eids == original  # the caller's objects are not changed


INTERSTITIAL_ROWS = [
    # PBS-Go TestInterstitial: format 300x600, device 320x640, 60 %
    ("pbs-go-vector", [{"w": 300, "h": 600}], {"w": 320, "h": 640}, (60, 60),
     [(300, 600), (250, 600), (300, 480), (180, 500), (300, 500), (300, 431), (300, 430), (200, 600), (202, 600),
      (300, 360)]),
    # 1x1 means "the device's size"
    ("device-size", [{"w": 1, "h": 1}], {"w": 320, "h": 480}, (100, 100), [(320, 480)]),
    ("no-format", [], {"w": 320, "h": 50}, (90, 90), [(320, 50), (300, 50), (319, 49), (301, 50)]),
]


@pytest.mark.parametrize(
    ("formats", "device", "percent", "sizes"), [pytest.param(*r[1:], id=r[0]) for r in INTERSTITIAL_ROWS]
)
def test_interstitial_sizes(
    formats: list[Any], device: dict[str, Any], percent: tuple[int, int], sizes: list[Any]
) -> None:
    request = base()
    imp0(request).update(instl=1, banner={"format": formats})
    request["device"] = {**device, "ext": {"prebid": {"interstitial": {
        "minwidthperc": percent[0], "minheightperc": percent[1]}}}}
    stored_imp = imp0(request)
    validated = run(request)
    assert [(f["w"], f["h"]) for f in validated.request["imp"][0]["banner"]["format"]] == sizes
    assert stored_imp["banner"]["format"] == formats  # the caller's imp is untouched


def test_interstitial_without_sizes_or_settings_is_valid() -> None:
    """``imp.instl=1`` with no banner sizes is a valid request (PBS-Go: validateBanner's isInterstitial)."""
    request = base()
    imp0(request).update(instl=1, banner={})
    validated = run(request)
    assert validated.request["imp"][0]["banner"] == {}


# --- end to end: the issue's requests through the real app, a mock bidder on a socket -------------------

def http_request(**fields: Any) -> dict[str, Any]:
    return {
        "id": "req-1",
        "tmax": 500,
        "imp": [{"id": "imp-1", "banner": {"format": [{"w": 300, "h": 250}]},
                 "ext": {"prebid": {"bidder": {"alpha": {"p": 1}}}}}],
        "site": {"page": "https://news.example/a"},
        **fields,
    }


def with_imp(**fields: Any) -> dict[str, Any]:
    request = http_request()
    request["imp"][0].update(fields)
    return request


HTTP_ROWS = [
    ("video-negative-w", with_imp(video={"mimes": ["video/mp4"], "w": -640}),
     "request.imp[0].video.w must be a positive number"),
    ("audio-negative-maxseq", with_imp(audio={"mimes": ["audio/mp4"], "maxseq": -1}),
     "request.imp[0].audio.maxseq must be a positive number"),
    ("native-malformed", with_imp(banner=None, native={"request": '{"assets":[{"id":1,"title":{}}]}'}),
     "request.imp[0].native.request.assets[0].title.len must be a positive number"),
    ("native-video-duration", with_imp(banner=None, native={"request": '{"assets":[{"id":1,"video":'
                                                                       '{"mimes":["video/mp4"],"minduration":-5}}]}'}),
     "request.imp[0].native.request.assets[0].video.minduration must be a positive integer"),
    ("buyeruids-empty", http_request(user={"ext": {"prebid": {"buyeruids": {}}}}),
     'request.user.ext.prebid requires a "buyeruids" property with at least one ID defined. '
     "If none exist, then request.user.ext.prebid should not be defined."),
    ("buyeruids-unknown", http_request(user={"ext": {"prebid": {"buyeruids": {"nobody": "1"}}}}),
     "request.user.ext.nobody is neither a known bidder name nor an alias in request.ext.prebid.aliases"),
    ("user-ext-consent-int", http_request(user={"ext": {"consent": 1}}),
     'req.user.ext is invalid: expects " or n, but found 1'),
    ("user-geo-accuracy", http_request(user={"geo": {"accuracy": -1}}),
     "request.user.geo.accuracy must be a positive number"),
    ("app-source-object", http_request(site=None, app={"id": "a", "ext": {"prebid": {"source": {}}}}),
     'cannot unmarshal openrtb_ext.ExtAppPrebid.Source: expects " or n, but found {'),
    ("interstitial-perc", with_imp(instl=1) | {"device": {"w": 320, "h": 480, "ext": {
        "prebid": {"interstitial": {"minwidthperc": 150, "minheightperc": 50}}}}},
     "request.device.ext.prebid.interstitial.minwidthperc must be a number between 0 and 100"),
    ("currency-foo", http_request(ext={"prebid": {"currency": {"rates": {"FOO": {"USD": 1.2}}}}}),
     "currency code FOO is not recognized or malformed"),
    ("deal-without-id", with_imp(pmp={"deals": [{"bidfloor": 1.5}]}),
     'request.imp[0].pmp.deals[0] missing required field: "id"'),
    ("format-negative-hratio", with_imp(banner={"format": [{"wmin": 100, "wratio": 2, "hratio": -1}]}),
     "request.imp[0].banner.format[0].hratio must be a positive number"),
    ("format-negative-wmin", with_imp(banner={"format": [{"wmin": -100, "wratio": 2, "hratio": 1}]}),
     "request.imp[0].banner.format[0].wmin must be a positive number"),
    ("format-negative-h", with_imp(banner={"format": [{"w": 300, "h": -250}]}),
     "request.imp[0].banner.format[0].h must be a positive number"),
    ("dooh-empty", http_request(site=None, dooh={"name": "d"}),
     "request.dooh should include at least one of request.dooh.id or request.dooh.venuetype."),
    ("body-malformed", None, "expect { or n, but found m"),
]


@pytest.mark.parametrize(("body", "text"), [pytest.param(b, t, id=i) for i, b, t in HTTP_ROWS])
async def test_pbs_go_refusals_end_to_end(make_client, bidders, body: dict[str, Any] | None, text: str) -> None:
    client = await make_client(bidder_config(bidders, "alpha"))
    data = b"malformed" if body is None else json.dumps(body)  # a null member is an absent one (Go)
    response = await client.post("/openrtb2/auction", data=data)
    assert (response.status, await response.text()) == (400, f"Invalid request: {text}\n")
    assert bidders.received == {}


async def test_interstitial_native_and_eids_reach_the_bidder_as_pbs_go_makes_them(make_client, bidders) -> None:
    """A valid interstitial imp without sizes gets PBS-Go's format list; a native request without asset
    ids gets ids 0..n-1; EIDs without a source or id are removed with PBS-Go's warnings."""
    bidders.bids["alpha"] = [bid("imp-1", 1.0, "a1")]
    client = await make_client(bidder_config(bidders, "alpha"))
    request = http_request(
        device={"w": 320, "h": 640, "ext": {"prebid": {"interstitial": {"minwidthperc": 60, "minheightperc": 60}}}},
        user={"eids": [{"source": "ok.example", "uids": [{"id": "u1"}, {"id": ""}]}, {"uids": [{"id": "u2"}]}]},
    )
    request["imp"][0].update(instl=1, banner={"format": [{"w": 300, "h": 600}]})
    request["imp"].append({"id": "imp-2", "native": {"request": '{"assets":[{"title":{"len":90}},{"img":{"type":3}}]}'},
                           "ext": {"prebid": {"bidder": {"alpha": {"p": 2}}}}})
    response = await client.post("/openrtb2/auction", data=json.dumps(request))
    assert response.status == 200, await response.text()
    data = await response.json()
    warnings = [(w["code"], w["message"]) for w in data["ext"]["warnings"]["general"]]
    assert warnings == [
        (10014, "request.user.eids[0].uids[1] removed due to empty ids"),
        (10013, "request.user.eids[1] removed due to missing source"),
    ]
    sent = bidders.received["alpha"][0]
    formats = [(f["w"], f["h"]) for f in sent["imp"][0]["banner"]["format"]]
    assert formats == [(300, 600), (250, 600), (300, 480), (180, 500), (300, 500), (300, 431), (300, 430),
                       (200, 600), (202, 600), (300, 360)]
    native = json.loads(sent["imp"][1]["native"]["request"])
    assert [asset["id"] for asset in native["assets"]] == [0, 1]
    eids = sent["user"].get("eids") or sent["user"]["ext"]["eids"]  # alpha speaks OpenRTB 2.5 or 2.6
    assert eids == [{"source": "ok.example", "uids": [{"id": "u1"}]}]
