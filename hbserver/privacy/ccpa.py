"""The IAB US Privacy string (``us_privacy``, e.g. ``1YNN``), validated as PBS-Go validates it.

Four characters: version ``1``, then explicit notice, opt-out of sale and LSPA coverage, each
``Y``, ``N`` or ``-`` (upper case only). An empty string raises ValueError too: PBS-Go treats
"" as "no signal", and so should callers, who treat any invalid value as absent.
"""

from __future__ import annotations

from dataclasses import dataclass

_FLAGS = frozenset("YN-")


@dataclass(frozen=True, slots=True)
class USPrivacy:
    version: int
    explicit_notice: str  # 'Y', 'N' or '-'
    opt_out_sale_flag: str  # 'Y', 'N' or '-'
    lspa_covered: str  # 'Y', 'N' or '-'

    @property
    def opt_out_sale(self) -> bool:
        """The user opted out of the sale of personal information."""
        return self.opt_out_sale_flag == "Y"

    def __str__(self) -> str:
        return f"{self.version}{self.explicit_notice}{self.opt_out_sale_flag}{self.lspa_covered}"


def parse_us_privacy(value: str) -> USPrivacy:
    """Parse a US Privacy string; raises ValueError with PBS-Go's wording."""
    if not value:
        raise ValueError("us_privacy is empty")
    if len(value) != 4:
        raise ValueError("must contain 4 characters")
    if value[0] != "1":
        raise ValueError("must specify version 1")
    for char, name in zip(
        value[1:], ("explicit notice", "opt-out sale", "limited service provider agreement"), strict=True
    ):
        if char not in _FLAGS:
            raise ValueError(f"must specify 'N', 'Y', or '-' for the {name}")
    return USPrivacy(1, value[1], value[2], value[3])
