"""Price floors (PBS-Go ``floors`` package): floors data parsing and checks, rule selection, the
per-auction resolution of ``imp.bidfloor`` and floors enforcement on bids.

The background fetcher of provider data lives in ``hbserver.floors.fetcher`` (it calls
:func:`validate_fetched_floors` and hands :class:`Fetched` to :func:`resolve_floors`).
"""

from hbserver.floors.data import (
    FETCH_ERROR,
    FETCH_INPROGRESS,
    FETCH_NONE,
    FETCH_SUCCESS,
    FETCH_TIMEOUT,
    LOCATION_FETCH,
    LOCATION_NO_DATA,
    LOCATION_REQUEST,
    Enforcement,
    Fetched,
    FloorRules,
    FloorsData,
    FloorsDataError,
    ModelGroup,
    parse_floor_rules,
    parse_floors_data,
)
from hbserver.floors.enforce import (
    FLOOR_BID_REJECTION_WARNING_CODE,
    NON_BID_BELOW_DEAL_FLOOR,
    NON_BID_BELOW_FLOOR,
    BidFloors,
    EnforceResult,
    FloorRejection,
    adjust_floors_for_bidder,
    enforce_floors,
    floor_adjustment_factor,
    rejection_warning,
)
from hbserver.floors.resolve import (
    FLOOR_ERROR_CODE,
    FLOORS_DISABLED,
    FloorsResolution,
    fetch_config,
    resolve_floors,
)
from hbserver.floors.validate import (
    validate_fetched_floors,
    validate_imp_floors,
    validate_request_floors,
)

__all__ = [
    "FETCH_ERROR",
    "FETCH_INPROGRESS",
    "FETCH_NONE",
    "FETCH_SUCCESS",
    "FETCH_TIMEOUT",
    "FLOORS_DISABLED",
    "FLOOR_BID_REJECTION_WARNING_CODE",
    "FLOOR_ERROR_CODE",
    "LOCATION_FETCH",
    "LOCATION_NO_DATA",
    "LOCATION_REQUEST",
    "NON_BID_BELOW_DEAL_FLOOR",
    "NON_BID_BELOW_FLOOR",
    "BidFloors",
    "EnforceResult",
    "Enforcement",
    "Fetched",
    "FloorRejection",
    "FloorRules",
    "FloorsData",
    "FloorsDataError",
    "FloorsResolution",
    "ModelGroup",
    "adjust_floors_for_bidder",
    "enforce_floors",
    "fetch_config",
    "floor_adjustment_factor",
    "parse_floor_rules",
    "parse_floors_data",
    "rejection_warning",
    "resolve_floors",
    "validate_fetched_floors",
    "validate_imp_floors",
    "validate_request_floors",
]
