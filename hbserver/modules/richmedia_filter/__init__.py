"""PBS-Java's ``pb-richmedia-filter`` module (see README.md)."""

from hbserver.modules.richmedia_filter.config import CODE, Properties
from hbserver.modules.richmedia_filter.module import HOOK_CODE, RichmediaFilterModule, RichmediaHookResult, build
from hbserver.modules.richmedia_filter.mraid import INVALID_BID_CODE, REJECTION_CODE, BidderRejection

__all__ = [
    "CODE",
    "HOOK_CODE",
    "INVALID_BID_CODE",
    "REJECTION_CODE",
    "BidderRejection",
    "Properties",
    "RichmediaFilterModule",
    "RichmediaHookResult",
    "build",
]
