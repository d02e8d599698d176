"""PBS-Java's ``pb-response-correction`` module (see README.md)."""

from hbserver.modules.response_correction.module import (
    CODE,
    HOOK_CODE,
    NO_REQUEST_WARNING,
    ResponseCorrectionModule,
    build,
)

__all__ = ["CODE", "HOOK_CODE", "NO_REQUEST_WARNING", "ResponseCorrectionModule", "build"]
