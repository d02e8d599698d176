"""OneTag adapter: the request, unchanged, in one OpenRTB call to
``prebid-server.onetag-sys.com/prebid-server/{{.PublisherID}}``.

Every imp must carry the same non-empty ``pubId`` param, which fills the endpoint's
``{{.PublisherID}}`` as given (PBS-Go's text template does not escape it); any imp without one, or
with another, fails the whole request. The call has no headers of its own. Bids are typed by their
imp (banner, else video, else native); a bid for an imp not in the request fails the whole answer.
"""

from __future__ import annotations

from typing import Any

import orjson

from hbserver.adapters.base import (
    AdapterConfig,
    BidderError,
    BidderResponse,
    RequestData,
    RequestInfo,
    ResponseData,
    bad_input,
)
from hbserver.adapters.common import (
    BANNER_VIDEO_NATIVE,
    UNEXPECTED_STATUS,
    AnswerWording,
    JsonShapeError,
    expect_string,
    imp_not_in_request,
    resolve_macros,
    typed_by_imp,
)
from hbserver.adapters.golike import ImpExtError, go_field, go_typed_bids, imp_bidder_params

_ANSWER_WORDING = AnswerWording(status=UNEXPECTED_STATUS + ".", bad_request_is_input=False)


class _BadImp(ValueError):
    """An imp this adapter cannot send (the message is the bidder error's)."""


def _publisher_id(imp: dict[str, Any]) -> str:
    """The imp's ``pubId`` param; _BadImp in PBS-Go's words when ``imp.ext`` or the params do not
    decode (a null ``bidder`` included: PBS-Go's decoder has no bytes to read)."""
    try:
        params = imp_bidder_params(imp, null_is_absent=True)
        return expect_string(go_field(params, "pubId"), "openrtb_ext.ExtImpOnetag.PubId")
    except ImpExtError:
        raise _BadImp("Bidder extension not provided or can't be unmarshalled") from None
    except JsonShapeError:
        raise _BadImp("Error while unmarshaling bidder extension") from None


class OnetagAdapter:
    def __init__(self, config: AdapterConfig) -> None:
        self.endpoint = config.endpoint

    def make_requests(self, request: dict[str, Any], info: RequestInfo) -> tuple[list[RequestData], list[BidderError]]:
        imps = request.get("imp") or []
        publisher = ""
        for imp in imps:
            try:
                imp_publisher = _publisher_id(imp)
            except _BadImp as exc:
                return [], [bad_input(str(exc))]
            if not imp_publisher:
                return [], [bad_input("The publisher ID must not be empty")]
            if publisher and imp_publisher != publisher:
                return [], [bad_input("There must be only one publisher ID")]
            publisher = imp_publisher
        uri = resolve_macros(self.endpoint, {"PublisherID": publisher})
        ids = [imp.get("id", "") for imp in imps]
        return [RequestData("POST", uri, orjson.dumps(request), {}, imp_ids=ids)], []

    def make_bids(
        self, request: dict[str, Any], call: RequestData, response: ResponseData
    ) -> tuple[BidderResponse | None, list[BidderError]]:
        typed = typed_by_imp(request.get("imp") or (), imp_not_in_request, BANNER_VIDEO_NATIVE)
        return go_typed_bids(response, typed, _ANSWER_WORDING, first_error_fails=True)


def build(config: AdapterConfig) -> OnetagAdapter:
    return OnetagAdapter(config)
