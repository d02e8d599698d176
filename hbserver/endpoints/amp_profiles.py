"""Profiles on /openrtb2/amp, as PBS-Java's AmpRequestFactory runs them: on the stored request the
``tag_id`` names (its ``ext.prebid.profiles`` and its imp's), after it is read and before AMP's rules
and the query's overrides (``check_stored``, then ``amp_request``).

The account whose ``auction.profiles`` applies is the query's ``account``, else the stored request's
publisher; debug is the query's ``debug=1`` (PBS-Java's AMP DebugContext), when the account allows it.

The AMP endpoint memoizes a prepared request per slot while the stored request's bytes stay the same;
a request with profiles also depends on the profiles' bytes and the account's settings, which
:meth:`AmpProfiles.unchanged` checks on every reuse (a stored request without profiles pays nothing).
"""

from __future__ import annotations

from typing import Any

from hbserver.auction.common.messages import Message
from hbserver.auction.common.request_error import refusal_text
from hbserver.auction.core import AuctionRefused, AuctionService
from hbserver.auction.request.amp import UNRESOLVED_ACCOUNT_MACRO, AmpParams
from hbserver.auction.request.profiles import (
    ProfileSettings,
    ProfileTrace,
    count_again,
    fetch_timeout_s,
    profile_ids,
    profile_settings,
    request_account,
    traced_profiles,
)
from hbserver.auction.request.stored import StoredDataUnavailable, fetch_failure
from hbserver.auction.request.validate import RequestError
from hbserver.stores.stored import StoredData


class AmpProfiles:
    def __init__(self, service: AuctionService, stored: StoredData) -> None:
        self.service = service
        self.stored = stored
        self.max_tmax_ms = service.config.auction_timeouts_ms.max
        self.host_timeout_ms = service.config.auction.profiles.timeout_ms

    async def apply(
        self, stored_request: dict[str, Any], params: AmpParams
    ) -> tuple[dict[str, Any], list[Message], ProfileTrace | None]:
        """The stored request with its profiles merged, their debug warnings and their trace (None when it
        names none); raises AuctionRefused (400 for the request's fault, 503 for a failed backend)."""
        try:
            ids = profile_ids(stored_request)
            if ids is None:
                return stored_request, [], None
            account = params.account if params.account and params.account != UNRESOLVED_ACCOUNT_MACRO else ""
            settings = await self._settings(account or request_account(stored_request), params.debug)
            timeout_s = fetch_timeout_s(settings, stored_request.get("tmax"), self.max_tmax_ms)
            return await traced_profiles(stored_request, ids, self.stored, settings, timeout_s)
        except RequestError as exc:
            raise AuctionRefused(400, refusal_text(exc), "badinput") from None
        except StoredDataUnavailable as exc:
            raise AuctionRefused(503, str(exc), "err") from None

    async def unchanged(self, trace: ProfileTrace) -> bool:
        """Whether a memo built with ``trace`` still holds: the account's settings and every profile's bytes
        are the same (counted again as PBS-Java counts each request, when they are)."""
        settings = trace.settings
        if await self._settings(settings.account, settings.debug) != settings:
            return False
        if trace.wanted:
            found, errors = await self.stored.fetch_profiles(trace.wanted, settings.timeout_ms / 1000)
            if fetch_failure(errors) is not None or found != trace.found:
                return False
        count_again(self.stored, trace)
        return True

    async def _settings(self, account_id: str, debug: bool) -> ProfileSettings:
        """The account's profile settings (``account_defaults`` for none); AuctionRefused when the account is
        refused, before any profile, as PBS-Java loads the account first."""
        if account_id:
            account = (await self.service._account(account_id)).settings
        else:
            account = self.service.accounts.defaults
        return profile_settings(
            account.auction.profiles, account.debug_allow, {"test": 1 if debug else 0}, account_id, self.host_timeout_ms
        )
