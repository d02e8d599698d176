"""ISO 4217 currency codes as PBS-Go's ``ValidateCustomRates`` accepts them (x/text ``currency.ParseISO``).

PBS-Go refuses a custom-rate code that ``golang.org/x/text/currency.ParseISO`` rejects, with
``currency code %s is not recognized or malformed``. ``ParseISO`` takes exactly three bytes, each an
ASCII letter in either case (``usd`` and ``uSd`` are ``USD``), and "recognized" means present in its
CLDR-derived table, which holds current, historic (``DEM``, ``FRF``, ``ZWD``), fund (``USN``, ``CLF``)
and special codes (``XXX``, ``XTS``, ``XAU``, ``XDR``), but no code added after CLDR 32 (``VES``,
``MRU``, ``SLE``, ``ZWG`` are refused).
"""

from __future__ import annotations

# The 300 codes of x/text v0.37.0 (PBS-Go's go.mod) currency/tables.go ``currency`` index, CLDR 32;
# unchanged up to x/text v0.40.0.
# fmt: off
ISO4217_CODES: frozenset[str] = frozenset(
    (
        "ADP", "AED", "AFA", "AFN", "ALK", "ALL", "AMD", "ANG", "AOA", "AOK", "AON", "AOR", "ARA",
        "ARL", "ARM", "ARP", "ARS", "ATS", "AUD", "AWG", "AZM", "AZN", "BAD", "BAM", "BAN", "BBD",
        "BDT", "BEC", "BEF", "BEL", "BGL", "BGM", "BGN", "BGO", "BHD", "BIF", "BMD", "BND", "BOB",
        "BOL", "BOP", "BOV", "BRB", "BRC", "BRE", "BRL", "BRN", "BRR", "BRZ", "BSD", "BTN", "BUK",
        "BWP", "BYB", "BYN", "BYR", "BZD", "CAD", "CDF", "CHE", "CHF", "CHW", "CLE", "CLF", "CLP",
        "CNH", "CNX", "CNY", "COP", "COU", "CRC", "CSD", "CSK", "CUC", "CUP", "CVE", "CYP", "CZK",
        "DDM", "DEM", "DJF", "DKK", "DOP", "DZD", "ECS", "ECV", "EEK", "EGP", "ERN", "ESA", "ESB",
        "ESP", "ETB", "EUR", "FIM", "FJD", "FKP", "FRF", "GBP", "GEK", "GEL", "GHC", "GHS", "GIP",
        "GMD", "GNF", "GNS", "GQE", "GRD", "GTQ", "GWE", "GWP", "GYD", "HKD", "HNL", "HRD", "HRK",
        "HTG", "HUF", "IDR", "IEP", "ILP", "ILR", "ILS", "INR", "IQD", "IRR", "ISJ", "ISK", "ITL",
        "JMD", "JOD", "JPY", "KES", "KGS", "KHR", "KMF", "KPW", "KRH", "KRO", "KRW", "KWD", "KYD",
        "KZT", "LAK", "LBP", "LKR", "LRD", "LSL", "LTL", "LTT", "LUC", "LUF", "LUL", "LVL", "LVR",
        "LYD", "MAD", "MAF", "MCF", "MDC", "MDL", "MGA", "MGF", "MKD", "MKN", "MLF", "MMK", "MNT",
        "MOP", "MRO", "MTL", "MTP", "MUR", "MVP", "MVR", "MWK", "MXN", "MXP", "MXV", "MYR", "MZE",
        "MZM", "MZN", "NAD", "NGN", "NIC", "NIO", "NLG", "NOK", "NPR", "NZD", "OMR", "PAB", "PEI",
        "PEN", "PES", "PGK", "PHP", "PKR", "PLN", "PLZ", "PTE", "PYG", "QAR", "RHD", "ROL", "RON",
        "RSD", "RUB", "RUR", "RWF", "SAR", "SBD", "SCR", "SDD", "SDG", "SDP", "SEK", "SGD", "SHP",
        "SIT", "SKK", "SLL", "SOS", "SRD", "SRG", "SSP", "STD", "STN", "SUR", "SVC", "SYP", "SZL",
        "THB", "TJR", "TJS", "TMM", "TMT", "TND", "TOP", "TPE", "TRL", "TRY", "TTD", "TWD", "TZS",
        "UAH", "UAK", "UGS", "UGX", "USD", "USN", "USS", "UYI", "UYP", "UYU", "UZS", "VEB", "VEF",
        "VND", "VNN", "VUV", "WST", "XAF", "XAG", "XAU", "XBA", "XBB", "XBC", "XBD", "XCD", "XDR",
        "XEU", "XFO", "XFU", "XOF", "XPD", "XPF", "XPT", "XRE", "XSU", "XTS", "XUA", "XXX", "YDD",
        "YER", "YUD", "YUM", "YUN", "YUR", "ZAL", "ZAR", "ZMK", "ZMW", "ZRN", "ZRZ", "ZWD", "ZWL",
        "ZWR",
    )
)
# fmt: on


def is_iso4217(code: str) -> bool:
    """Whether ``ParseISO(code)`` succeeds: three ASCII letters, any case, naming a code in the table.

    The ASCII check comes first because ``str.upper`` maps some non-ASCII letters onto ASCII ones
    (long s, U+017F, upper-cases to ``S``), which Go's byte-wise case fix does not.
    """
    return len(code) == 3 and code.isascii() and code.upper() in ISO4217_CODES


NOT_WELL_FORMED = "currency: tag is not well-formed"
NOT_RECOGNIZED = "currency: tag is not a recognized currency"


def iso4217_problem(code: str) -> str | None:
    """``ParseISO``'s error text for ``code``, None when it parses: anything but three ASCII letters is
    not well-formed, three letters outside the table are not recognized."""
    if len(code) != 3 or not code.isascii() or not code.isalpha():
        return NOT_WELL_FORMED
    return None if code.upper() in ISO4217_CODES else NOT_RECOGNIZED
