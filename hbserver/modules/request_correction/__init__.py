"""PBS-Java's ``pb-request-correction`` module (see README.md)."""

from hbserver.modules.request_correction.module import CODE, HOOK_CODE, RequestCorrectionModule, build

__all__ = ["CODE", "HOOK_CODE", "RequestCorrectionModule", "build"]
