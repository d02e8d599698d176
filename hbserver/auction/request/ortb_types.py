"""PBS-Go's JSON type errors for auction requests: the first value of a wrong JSON type, in PBS-Go's words.

PBS-Go decodes the (stored-data-merged) body with json-iterator into the typed structs of
``github.com/prebid/openrtb/v20`` and later parses the ``ext`` objects into its ``openrtb_ext``
structs. A value of the wrong JSON type is a 400 whose text json-iterator builds while it decodes:
each decoder layer puts its ``Type.Field: `` in front, and PBS-Go's ``tryExtractErrorMessage`` keeps
the innermost ``cannot unmarshal Type.Field: <what>``. The public functions here return that text
(without ``Invalid request: ``), or None when PBS-Go would decode the value.

Two layers:

* a fast check, run on every auction: it walks only the keys present (dict lookups compiled once from
  :mod:`hbserver.auction.request.ortb_schema`) and asks nothing but "is every typed value of its type?";
* when that finds a fault, a model of json-iterator decodes the JSON text of the value byte by byte
  the way json-iterator does, including how it carries on after the first error (it keeps decoding,
  and every decoder it finishes adds its prefix to the error, so what follows the faulty value can
  change the text), and PBS-Go's ``tryExtractErrorMessage`` reduces the result. Only the first
  error counts, as in json-iterator.

Faithful to json-iterator (v1.1.12, PBS-Go's version), which was run against this model on the
tests' rows and on thousands of mutated requests: ``null`` is accepted for every kind; unknown keys
are skipped; keys match struct fields ignoring case (``"ID"`` fills ``id``, ``floorMin`` fills
``floormin``; the last occurrence wins), while the keys of Go maps (``ext.prebid``, ``user.ext.consent``
...) match exactly; a number with a fraction into an integer field fails (``1.0`` too: ``can not decode
float as int``); an integer beyond an int8/int64 fails (``test: 300`` gives ``cannot unmarshal
ReadInt8: 300``: ``overflow`` has no space, so tryExtractErrorMessage takes it for a layer); a
non-digit into an integer field fails with ``unexpected character: \\xff`` (json-iterator prints the
byte 0xff; shown here as U+FFFD, as a client decoding PBS-Go's UTF-8 answer sees it).

Known limits, because the input is a parsed dict rather than PBS-Go's bytes: the model reads the
value written again, numbers as a JavaScript client writes them (``1e2`` becomes ``100.0``, an integer
literal beyond 64 bits, a float to orjson, digits again), and of a key given twice only the last value
remains. Texts that depend on those details can differ from PBS-Go's.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import orjson

from hbserver.auction.request.ortb_schema import NAMED, STRUCTS, UNMARSHALERS

# --- json-iterator's Iterator over a byte buffer ----------------------------------------------------

_EOF = "EOF"  # Go's iter.Error == io.EOF: the end of the input was read, which is not an error

_WHITESPACE = frozenset(b" \n\t\r")
_STRING_STOP = re.compile(rb'["\\\x00-\x1f]')
_KEY_STOP = re.compile(rb'["\\]')
_NUMBER_CHARS = re.compile(rb"[-+.eE0-9]*")
_GO_FLOAT = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")

_INVALID, _END, _DOT = -1, -2, -3
_INT_DIGITS = [_INVALID] * 256
_FLOAT_DIGITS = [_INVALID] * 256
for _digit in range(10):
    _INT_DIGITS[48 + _digit] = _FLOAT_DIGITS[48 + _digit] = _digit
for _byte in b",]} \t\n":
    _FLOAT_DIGITS[_byte] = _END
_FLOAT_DIGITS[46] = _DOT

_U64_SAFE = (2**64 - 1) // 10 - 1  # json-iterator's uint64SafeToMultiple10
_MAX_FLOAT64_INT = 2**53 - 1
_FLOAT32_OVERFLOW = 2.0**128 - 2.0**103  # the least magnitude that rounds to +-Inf as a float32
_INT_READERS = {  # Go kind -> (bits, signed, name of json-iterator's Read function)
    "int8": (8, True, b"ReadInt8"),
    "int16": (16, True, b"ReadInt16"),
    "int32": (32, True, b"ReadInt32"),
    "int64": (64, True, b"ReadInt64"),
    "int": (64, True, b"ReadInt64"),  # a 64-bit Go int
    "uint8": (8, False, b"ReadUint8"),
    "uint16": (16, False, b"ReadUint16"),
    "uint32": (32, False, b"ReadUint32"),
    "uint64": (64, False, b"ReadUint64"),
    "uint": (64, False, b"ReadUint64"),
}


def _char(c: int) -> bytes:
    return bytes((c,))


class _Iter:
    """json-iterator's ``Iterator`` on a byte slice (no reader): the same reads, the same head moves,
    and ``ReportError``'s first-error-wins. ``error`` is None, ``_EOF`` or the error text (bytes)."""

    __slots__ = ("buf", "error", "head", "tail")

    def __init__(self, buf: bytes) -> None:
        self.buf = buf
        self.head = 0
        self.tail = len(buf)
        self.error: bytes | str | None = None

    @property
    def failed(self) -> bool:
        """Go's ``iter.Error != nil && iter.Error != io.EOF``."""
        return type(self.error) is bytes

    def report_error(self, operation: bytes, message: bytes) -> None:
        if self.failed:
            return
        head, buf = self.head, self.buf
        peek_start = max(head - 10, 0)
        parsing = buf[peek_start : min(head + 10, self.tail)]
        context = buf[max(head - 50, 0) : min(head + 50, self.tail)]
        self.error = b"%s: %s, error found in #%d byte of ...|%s|..., bigger context ...|%s|..." % (
            operation, message, head - peek_start, parsing, context,
        )

    def prefix(self, text: bytes) -> None:
        """A decoder layer's ``Type.`` / ``Field: `` in front of an error (never of io.EOF)."""
        if type(self.error) is bytes:
            self.error = text + self.error

    def _load_more(self) -> None:
        if self.error is None:
            self.head = self.tail
            self.error = _EOF

    def next_token(self) -> int:
        buf, i, tail = self.buf, self.head, self.tail
        while i < tail:
            c = buf[i]
            if c not in _WHITESPACE:
                self.head = i + 1
                return c
            i += 1
        self._load_more()
        return 0

    def read_byte(self) -> int:
        if self.head == self.tail:
            self._load_more()
            return 0
        c = self.buf[self.head]
        self.head += 1
        return c

    def unread_byte(self) -> None:
        if self.error is None:
            self.head -= 1

    def skip_bytes(self, expected: bytes) -> None:
        """skipThreeBytes / skipFourBytes: the rest of ``null``, ``true`` or ``false``."""
        for b in expected:
            if self.read_byte() != b:
                op = b"skipThreeBytes" if len(expected) == 3 else b"skipFourBytes"
                self.report_error(op, b"expect " + expected)
                return

    def read_nil(self) -> bool:
        if self.next_token() == 110:  # n
            self.skip_bytes(b"ull")
            return True
        self.unread_byte()
        return False

    def read_object_start(self) -> bool:
        c = self.next_token()
        if c == 123:  # {
            if self.next_token() == 125:  # }
                return False
            self.unread_byte()
            return True
        if c == 110:
            self.skip_bytes(b"ull")
            return False
        self.report_error(b"readObjectStart", b"expect { or n, but found " + _char(c))
        return False

    def is_object_end(self) -> bool:
        c = self.next_token()
        if c == 44:  # ,
            return False
        if c != 125:
            self.report_error(b"isObjectEnd", b"object ended prematurely, unexpected char " + _char(c))
        return True

    # strings

    def read_string(self) -> bytes | None:
        """The string's bytes (escapes decoded); None after an error (Go returns "")."""
        c = self.next_token()
        if c == 34:  # "
            buf, head = self.buf, self.head
            stop = _STRING_STOP.search(buf, head)
            if stop is None:
                return self._read_string_slow()
            i = stop.start()
            c = buf[i]
            if c == 34:
                self.head = i + 1
                return buf[head:i]
            if c == 92:  # backslash
                return self._read_string_slow()
            self.report_error(b"ReadString", b"invalid control character found: %d" % c)
            return None
        if c == 110:
            self.skip_bytes(b"ull")
            return b""
        self.report_error(b"ReadString", b'expects " or n, but found ' + _char(c))
        return None

    def _read_string_slow(self) -> bytes | None:
        """readStringSlowPath, a run of plain bytes at a time (it takes any byte but ``"`` and ``\\``)."""
        out = bytearray()
        buf = self.buf
        while self.error is None:
            stop = _KEY_STOP.search(buf, self.head)
            if stop is None:
                out += buf[self.head : self.tail]
                self._load_more()
                break
            i = stop.start()
            out += buf[self.head : i]
            self.head = i + 1
            if buf[i] == 34:
                return bytes(out)
            self._read_escaped(self.read_byte(), out)
        self.report_error(b"readStringSlowPath", b"unexpected end of input")
        return None

    def _read_escaped(self, c: int, out: bytearray) -> None:
        if c == 117:  # u
            r = self._read_u4()
            if 0xD800 <= r < 0xE000:
                c = self.read_byte()
                if self.error is not None:
                    return
                if c != 92:
                    self.unread_byte()
                    _append_rune(out, r)
                    return
                c = self.read_byte()
                if self.error is not None:
                    return
                if c != 117:
                    _append_rune(out, r)
                    self._read_escaped(c, out)
                    return
                r2 = self._read_u4()
                if self.error is not None:
                    return
                if 0xD800 <= r < 0xDC00 and 0xDC00 <= r2 < 0xE000:
                    _append_rune(out, 0x10000 + ((r - 0xD800) << 10) + (r2 - 0xDC00))
                else:
                    _append_rune(out, r)
                    _append_rune(out, r2)
            else:
                _append_rune(out, r)
            return
        simple = _ESCAPES.get(c)
        if simple is None:
            self.report_error(b"readEscapedChar", b"invalid escape char after \\")
            return
        out.append(simple)

    def _read_u4(self) -> int:
        value = 0
        for _ in range(4):
            c = self.read_byte()
            if self.error is not None:
                return value
            digit = _HEX.get(c)
            if digit is None:
                self.report_error(b"readU4", b"expects 0~9 or a~f, but found " + _char(c))
                return value
            value = value * 16 + digit
        return value

    def read_field_hash(self) -> bytes | None:
        """The N-field struct decoders' key read: the key ASCII-lowercased, None after an error."""
        c = self.next_token()
        if c != 34:
            self.report_error(b"readFieldHash", b'expect ", but found ' + _char(c))
            return None
        buf, start = self.buf, self.head
        stop = _KEY_STOP.search(buf, start)
        if stop is None:
            self._load_more()
            self.report_error(b"readFieldHash", b"incomplete field name")
            return None
        i = stop.start()
        if buf[i] == 92:
            self.head = i
            key = buf[start:i] + (self._read_string_slow() or b"")
        else:
            self.head = i + 1
            key = buf[start:i]
        c = self.next_token()
        if c != 58:  # :
            self.report_error(b"readFieldHash", b"expect :, but found " + _char(c))
            return None
        return key.lower()

    # numbers and booleans

    def read_bool(self) -> None:
        c = self.next_token()
        if c == 116:  # t
            self.skip_bytes(b"rue")
        elif c == 102:  # f
            self.skip_bytes(b"alse")
        else:
            self.report_error(b"ReadBool", b"expect t or f, but found " + _char(c))

    def read_int(self, bits: int, signed: bool, name: bytes) -> None:
        c = self.next_token()
        if signed and c == 45:  # -
            value = self._read_uint(self.read_byte(), bits)
            if value > 1 << (bits - 1):
                self.report_error(name, b"overflow: %d" % value)
            return
        value = self._read_uint(c, bits)
        limit = (1 << (bits - 1)) - 1 if signed else (1 << bits) - 1
        if bits in (8, 16) or signed:
            if value > limit:
                self.report_error(name, b"overflow: %d" % value)

    def _read_uint(self, c: int, bits: int) -> int:
        """readUint32 / readUint64, with their fast path (it decides where the head stops on overflow)."""
        op = b"readUint64" if bits == 64 else b"readUint32"
        value = _INT_DIGITS[c]
        if value == 0:
            self._assert_integer()
            return 0
        if value < 0:
            self.report_error(op, b"unexpected character: \xff")
            return 0
        buf, tail = self.buf, self.tail
        if tail - self.head > 10:
            i = self.head
            for _ in range(7):
                digit = _INT_DIGITS[buf[i]]
                if digit < 0:
                    self.head = i
                    self._assert_integer()
                    return value
                value = value * 10 + digit
                i += 1
            self.head = i
            if _INT_DIGITS[buf[i]] < 0:
                self._assert_integer()
                return value
        mask = (1 << (64 if bits == 64 else 32)) - 1
        safe = mask // 10 - 1
        i = self.head
        while i < tail:
            digit = _INT_DIGITS[buf[i]]
            if digit < 0:
                self.head = i
                self._assert_integer()
                return value
            if value > safe:
                grown = (value * 10 + digit) & mask
                if grown < value:
                    self.report_error(op, b"overflow")
                    return 0
                value = grown
            else:
                value = value * 10 + digit
            i += 1
        self._load_more()
        self._assert_integer()
        return value

    def _assert_integer(self) -> None:
        if self.head < self.tail and self.buf[self.head] == 46:
            self.report_error(b"assertInteger", b"can not decode float as int")

    def read_float(self, bits: int) -> None:
        if self.next_token() != 45:
            self.unread_byte()
        self._read_positive_float(bits)

    def _read_positive_float(self, bits: int) -> None:
        name = b"readFloat64" if bits == 64 else b"readFloat32"
        buf, tail = self.buf, self.tail
        i = self.head
        if i == tail:
            return self._read_float_slow(bits)
        value = _FLOAT_DIGITS[buf[i]]
        i += 1
        if value == _INVALID:
            return self._read_float_slow(bits)
        if value == _END:
            return self.report_error(name, b"empty number")
        if value == _DOT:
            return self.report_error(name, b"leading dot is invalid")
        if value == 0:
            if i == tail:
                return self._read_float_slow(bits)
            if 48 <= buf[i] <= 57:
                return self.report_error(name, b"leading zero is invalid")
        dot = False
        while i < tail:
            kind = _FLOAT_DIGITS[buf[i]]
            if kind == _INVALID:
                return self._read_float_slow(bits)
            if kind == _END:
                self.head = i
                return None
            if kind == _DOT:
                dot = True
                break
            if value > _U64_SAFE:
                return self._read_float_slow(bits)
            value = value * 10 + kind
            i += 1
        if dot:
            i += 1
            places = 0
            if i == tail:
                return self._read_float_slow(bits)
            while i < tail:
                kind = _FLOAT_DIGITS[buf[i]]
                if kind == _END:
                    if 0 < places < 7:
                        self.head = i
                        return None
                    return self._read_float_slow(bits)
                if kind < 0:
                    return self._read_float_slow(bits)
                places += 1
                if value > _U64_SAFE:
                    return self._read_float_slow(bits)
                value = value * 10 + kind
                if bits == 64 and value > _MAX_FLOAT64_INT:
                    return self._read_float_slow(bits)
                i += 1
        return self._read_float_slow(bits)

    def _read_number_as_string(self) -> bytes:
        start = self.head
        match = _NUMBER_CHARS.match(self.buf, start)  # "*": always matches, maybe empty
        end = match.end() if match else start
        if end == self.tail:
            self._load_more()
        else:
            self.head = end
        if not self.failed and end == start:
            self.report_error(b"readNumberAsString", b"invalid number")
        return self.buf[start:end]

    def _read_float_slow(self, bits: int) -> None:
        text = self._read_number_as_string()
        if self.failed:
            return
        problem = _float_text_problem(text)
        if problem:
            self.report_error(b"readFloat64SlowPath" if bits == 64 else b"readFloat32SlowPath", problem)
            return
        error = _parse_float_error(text, bits)
        if error:
            self.error = error

    def _read_big_float(self) -> None:
        text = self._read_number_as_string()
        if not self.failed:
            error = _big_float_error(text)
            if error:
                self.error = error

    # skipping (json-iterator's strict Skip)

    def skip(self) -> None:
        c = self.next_token()
        if c == 34:
            self._skip_string()
        elif c == 110:
            self.skip_bytes(b"ull")
        elif c == 116:
            self.skip_bytes(b"rue")
        elif c == 102:
            self.skip_bytes(b"alse")
        elif c == 48:  # 0: read as a float32
            self.unread_byte()
            self.read_float(32)
        elif c == 45 or 49 <= c <= 57:
            self._skip_number()
        elif c == 91:
            self.unread_byte()
            self._skip_array()
        elif c == 123:
            self.unread_byte()
            self._skip_object()
        else:
            self.report_error(b"Skip", b"do not know how to skip: %d" % c)

    def _skip_string(self) -> None:
        buf = self.buf
        stop = _STRING_STOP.search(buf, self.head)
        if stop is not None:
            i = stop.start()
            c = buf[i]
            if c == 34:
                self.head = i + 1
                return
            if c != 92:
                self.report_error(b"trySkipString", b"invalid control character found: %d" % c)
                return
        self.unread_byte()
        self.read_string()

    def _skip_number(self) -> None:
        if self._try_skip_number():
            return
        self.unread_byte()
        if self.failed:
            return
        self.read_float(64)
        if self.failed:
            self.error = None
            self._read_big_float()

    def _try_skip_number(self) -> bool:
        buf, tail, head = self.buf, self.tail, self.head
        dot = False
        i = head
        while i < tail:
            c = buf[i]
            if 48 <= c <= 57:
                pass
            elif c == 46:
                if dot:
                    self.report_error(b"validateNumber", b"more than one dot found in number")
                    return True
                if i + 1 == tail:
                    return False
                if not 48 <= buf[i + 1] <= 57:
                    self.report_error(b"validateNumber", b"missing digit after dot")
                    return True
                dot = True
            elif c in b",]} \t\n\r":
                if i == head:
                    return False
                self.head = i
                return True
            else:
                return False
            i += 1
        return False

    def _skip_object(self) -> None:  # ReadObjectCB with Skip for each value
        c = self.next_token()
        if c == 123:
            c = self.next_token()
            if c == 34:
                self.unread_byte()
                while True:
                    self.read_string()
                    c = self.next_token()
                    if c != 58:
                        self.report_error(b"ReadObject", b"expect : after object field, but found " + _char(c))
                    self.skip()
                    c = self.next_token()
                    if c != 44:
                        break
                if c != 125:
                    self.report_error(b"ReadObjectCB", b"object not ended with }")
                return
            if c != 125:
                self.report_error(b"ReadObjectCB", b'expect " after {, but found ' + _char(c))
            return
        if c == 110:
            self.skip_bytes(b"ull")
            return
        self.report_error(b"ReadObjectCB", b"expect { or n, but found " + _char(c))

    def _skip_array(self) -> None:  # ReadArrayCB with Skip for each element
        c = self.next_token()
        if c == 91:
            c = self.next_token()
            if c != 93:
                self.unread_byte()
                self.skip()
                c = self.next_token()
                while c == 44:
                    self.skip()
                    c = self.next_token()
                if c != 93:
                    self.report_error(b"ReadArrayCB", b"expect ] in the end, but found " + _char(c))
            return
        if c == 110:
            self.skip_bytes(b"ull")
            return
        self.report_error(b"ReadArrayCB", b"expect [ or n, but found " + _char(c))


_ESCAPES = {34: 34, 92: 92, 47: 47, 98: 8, 102: 12, 110: 10, 114: 13, 116: 9}
_HEX = {c: int(chr(c), 16) for c in b"0123456789abcdefABCDEF"}


def _append_rune(out: bytearray, rune: int) -> None:
    if rune > 0x10FFFF or 0xD800 <= rune <= 0xDFFF:
        rune = 0xFFFD
    out += chr(rune).encode()


def _float_text_problem(text: bytes) -> bytes:
    """json-iterator's validateFloat (strconv.ParseFloat takes ``1.`` and ``1.e1``, it does not)."""
    if not text:
        return b"empty number"
    if text[0] == 45:
        return b"-- is not valid"
    dot = text.find(b".")
    if dot != -1:
        if dot == len(text) - 1:
            return b"dot can not be last character"
        if not 48 <= text[dot + 1] <= 57:
            return b"missing digit after dot"
    return b""


def _parse_float_error(text: bytes, bits: int) -> bytes | None:
    """strconv.ParseFloat's error for ``text`` (only the characters a JSON number may hold)."""
    if _GO_FLOAT.fullmatch(text) is None:
        return b'strconv.ParseFloat: parsing "%s": invalid syntax' % text
    value = float(text)
    if math.isinf(value) or (bits == 32 and abs(value) >= _FLOAT32_OVERFLOW):
        return b'strconv.ParseFloat: parsing "%s": value out of range' % text
    return None


_BIG_FLOAT = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def _big_float_error(text: bytes) -> bytes | None:
    """math/big's ParseFloat error, as far as the characters of a JSON number can cause one."""
    match = _BIG_FLOAT.match(text)
    if match is None or match.end() == 0:
        return b"number has no digits"
    rest = text[match.end() :]
    if not rest:
        return None
    if rest[:1] in (b"e", b"E"):
        return b"number has no digits"  # an exponent without digits
    return b"expected end of string, found '%s'" % rest[:1]


# --- PBS-Go's tryExtractErrorMessage ------------------------------------------------------------------


def extract_message(error: bytes) -> bytes:
    """PBS-Go's ``tryExtractErrorMessage``: the operation stack (``A: B: op: ``, stopped at the first
    part with a space) and the message up to ``, error found in #``; with more than one layer,
    ``cannot unmarshal <the layer before the operation>: <message>`` unless the message is one of
    PBS-Go's own ``request.`` texts. Hence a slice's error names the field holding the slice
    (``decode slice`` has a space) while a string's names the field itself."""
    end = error.rfind(b", error found in #")
    if end == -1:
        return error
    start = error.find(b": ")
    if start == -1:
        return error
    stack = [error[:start]]
    while True:
        following = error.find(b": ", start + 2)
        if following == -1:
            break
        following -= start + 2
        if start + following >= end:
            break
        part = error[start + 2 : start + 2 + following]
        if b" " in part:
            break
        stack.append(part)
        start += following + 2
    if len(stack) > 1 and not error[start + 2 :].startswith(b"request."):
        return b"cannot unmarshal " + stack[-2] + b": " + error[start + 2 : end]
    return error[start + 2 : end]


# --- the Go types: json-iterator's decoders (model) and the fast checks ------------------------------

# fast-check kinds; a spec is (kind, ...) with the kind's arguments
_K_STR, _K_I64, _K_I8, _K_NUM, _K_BOOL, _K_RAW, _K_INT, _K_STRUCT, _K_LIST, _K_MAP, _K_RAW_MAP, _K_CUSTOM = range(12)
_SCALAR_KINDS = frozenset({_K_STR, _K_I64, _K_I8, _K_NUM, _K_BOOL, _K_RAW})
# the fields on the way to the exts convertUpEnsureExt reads, per struct
_EXT_PATHS = {
    "openrtb2.BidRequest": frozenset({"ext", "source", "regs", "user", "imp"}),
    "openrtb2.Source": frozenset({"ext"}),
    "openrtb2.Regs": frozenset({"ext"}),
    "openrtb2.User": frozenset({"ext"}),
    "openrtb2.Imp": frozenset({"ext"}),
}
_Spec = tuple[Any, ...]


class _Node:
    """A Go type as json-iterator decodes it (``decode``) and its fast check (``spec``)."""

    __slots__ = ("spec",)

    def decode(self, it: _Iter) -> None:
        raise NotImplementedError


class _String(_Node):
    __slots__ = ()

    def __init__(self) -> None:
        self.spec = (_K_STR,)

    def decode(self, it: _Iter) -> None:
        it.read_string()


class _Int(_Node):
    __slots__ = ("bits", "name", "signed")

    def __init__(self, kind: str) -> None:
        self.bits, self.signed, self.name = _INT_READERS[kind]
        if self.signed:
            low, high = -(1 << (self.bits - 1)), (1 << (self.bits - 1)) - 1
        else:
            low, high = 0, (1 << self.bits) - 1
        kind = {(8, True): _K_I8, (64, True): _K_I64}.get((self.bits, self.signed), _K_INT)
        self.spec = (kind, low, high)

    def decode(self, it: _Iter) -> None:
        if not it.read_nil():
            it.read_int(self.bits, self.signed, self.name)


class _Float(_Node):
    __slots__ = ("bits",)

    def __init__(self, bits: int) -> None:
        self.bits = bits
        self.spec = (_K_NUM,)

    def decode(self, it: _Iter) -> None:
        if not it.read_nil():
            it.read_float(self.bits)


class _Bool(_Node):
    __slots__ = ()

    def __init__(self) -> None:
        self.spec = (_K_BOOL,)

    def decode(self, it: _Iter) -> None:
        if not it.read_nil():
            it.read_bool()


class _Raw(_Node):
    """json.RawMessage: kept as text after a (validating) skip."""

    __slots__ = ()

    def __init__(self) -> None:
        self.spec = (_K_RAW,)

    def decode(self, it: _Iter) -> None:
        if not it.read_nil():
            it.skip()


class _Pointer(_Node):
    __slots__ = ("elem",)

    def __init__(self, elem: _Node) -> None:
        self.elem = elem
        self.spec = elem.spec

    def decode(self, it: _Iter) -> None:
        if not it.read_nil():
            self.elem.decode(it)


class _Slice(_Node):
    __slots__ = ("elem", "prefix")

    def __init__(self, go_type: str, elem: _Node) -> None:
        self.elem = elem
        self.prefix = go_type.encode() + b": "
        self.spec = (_K_LIST, elem.spec)

    def decode(self, it: _Iter) -> None:
        self._decode(it)
        it.prefix(self.prefix)

    def _decode(self, it: _Iter) -> None:
        c = it.next_token()
        if c == 110:
            it.skip_bytes(b"ull")
            return
        if c != 91:
            it.report_error(b"decode slice", b"expect [ or n, but found " + _char(c))
            return
        if it.next_token() == 93:
            return
        it.unread_byte()
        elem = self.elem
        elem.decode(it)
        c = it.next_token()
        while c == 44:
            elem.decode(it)
            c = it.next_token()
        if c != 93:
            it.report_error(b"decode slice", b"expect ], but found " + _char(c))


class _Map(_Node):
    """A map with string keys (json-iterator's map decoder adds no prefix of its own)."""

    __slots__ = ("elem",)

    def __init__(self, elem: _Node) -> None:
        self.elem = elem
        self.spec = (_K_RAW_MAP,) if elem.spec[0] == _K_RAW else (_K_MAP, elem.spec)

    def decode(self, it: _Iter) -> None:
        c = it.next_token()
        if c == 110:
            it.skip_bytes(b"ull")
            return
        if c != 123:
            it.report_error(b"ReadMapCB", b"expect { or n, but found " + _char(c))
            return
        if it.next_token() == 125:
            return
        it.unread_byte()
        while True:
            it.read_string()
            c = it.next_token()
            if c != 58:
                it.report_error(b"ReadMapCB", b"expect : after object field, but found " + _char(c))
                return
            self.elem.decode(it)
            c = it.next_token()
            if c != 44:
                break
        if c != 125:
            it.report_error(b"ReadMapCB", b"expect }, but found " + _char(c))


class _Struct(_Node):
    """A named Go struct. Up to ten fields whose names are all lower case, json-iterator decodes with
    its hashed N-field decoders (keys compared ASCII-lowercased); otherwise with its general decoder
    (the key as given, else Go's ``strings.ToLower`` of it). The two differ only in how they read
    broken input, which matters for what follows a first error."""

    __slots__ = ("exact", "folded", "general", "lowered", "prefix")

    def __init__(self, go_type: str) -> None:
        self.prefix = go_type.encode() + b"."

    def setup(self, fields: list[tuple[str, str, _Node]]) -> None:
        self.exact = {name: (go_name.encode() + b": ", node) for name, go_name, node in fields}
        self.folded = {name.lower(): self.exact[name] for name, _, _ in fields}
        self.lowered = {name.encode(): field for name, field in self.folded.items()}
        entries = set(self.exact) | set(self.folded)
        self.general = len(entries) > 10 or len({e.lower() for e in entries}) < len(entries)
        kinds = {name: node.spec[0] for name, _, node in fields}
        subs = {name: node.spec for name, _, node in fields if node.spec[0] not in _SCALAR_KINDS}
        folded = {name.lower(): node.spec for name, _, node in fields}
        # (kind, json name -> kind, json name -> spec (for the kinds not checked inline),
        #  lower-case name -> spec, the lower-case names that lead to an ext: see _ok_struct)
        self.spec = (_K_STRUCT, kinds, subs, folded, _EXT_PATHS.get(self.prefix[:-1].decode(), frozenset()))

    def decode(self, it: _Iter) -> None:
        if not self.exact:
            self._skip_object(it)
        elif self.general:
            self._decode_general(it)
        else:
            self._decode_hashed(it)

    def _decode_general(self, it: _Iter) -> None:
        if not it.read_object_start():
            return
        c = 44
        while c == 44:
            key = it.read_string()
            field = None
            if key is not None:
                text = key.decode("utf-8", "surrogateescape")
                field = self.exact.get(text) or self.folded.get(text.lower())
            c = it.next_token()
            if c != 58:
                it.report_error(b"ReadObject", b"expect : after object field, but found " + _char(c))
            if field is None:
                it.skip()
            else:
                field[1].decode(it)
                it.prefix(field[0])
            c = it.next_token()
        it.prefix(self.prefix)
        if c != 125:
            it.report_error(b"struct Decode", b"expect }, but found " + _char(c))

    def _decode_hashed(self, it: _Iter) -> None:
        if not it.read_object_start():
            return
        while True:
            key = it.read_field_hash()
            field = None if key is None else self.lowered.get(key)
            if field is None:
                it.skip()
            else:
                field[1].decode(it)
                it.prefix(field[0])
            if it.is_object_end():
                break
        it.prefix(self.prefix)

    @staticmethod
    def _skip_object(it: _Iter) -> None:
        c = it.next_token()
        it.unread_byte()
        if c not in (123, 110):
            it.report_error(b"skipObjectDecoder", b"expect object or null")
            return
        it.skip()


class _Unmarshaler(_Node):
    """A type with its own ``UnmarshalJSON``: json-iterator skips the value and hands its text over;
    an error comes back as ``unmarshalerDecoder: <its text>``."""

    __slots__ = ("check", "unmarshal")

    def __init__(self, unmarshal: Callable[[bytes], bytes | None], check: Callable[[Any], bool]) -> None:
        self.unmarshal = unmarshal
        self.check = check
        self.spec = (_K_CUSTOM, check)

    def decode(self, it: _Iter) -> None:
        it.next_token()
        it.unread_byte()
        start = it.head
        it.skip()
        error = self.unmarshal(it.buf[start : it.head])
        if error is not None:
            it.report_error(b"unmarshalerDecoder", error)


def _unmarshal(data: bytes, node: _Node) -> bytes | None:
    """json-iterator's ``Unmarshal`` of ``data`` into ``node``: its raw error text, None if none."""
    it = _Iter(data)
    node.decode(it)
    if it.next_token() != 0:
        it.report_error(b"Unmarshal", b"there are bytes left after unmarshal")
    return it.error if type(it.error) is bytes else None


def _unmarshal_message(data: bytes, node: _Node) -> bytes | None:
    """PBS-Go's ``jsonutil.Unmarshal``: json-iterator's error reduced by tryExtractErrorMessage.

    The model recurses per nesting level; json-iterator goes 10000 levels deep. Bodies reach here at
    most MAX_JSON_DEPTH (64) deep, far within Python's limit; deeper input gets ``_TOO_DEEP``."""
    try:
        error = _unmarshal(data, node)
    except RecursionError:
        return _TOO_DEEP
    return None if error is None else extract_message(error)


_TOO_DEEP = b"the JSON is nested too deeply to check"

# custom UnmarshalJSON: openrtb_ext.PriceGranularity and openrtb_ext.ExtDeviceInt

_LEGACY_GRANULARITIES = frozenset({"low", "med", "medium", "high", "auto", "dense"})
_STRING_NODE = _String()


def _price_granularity_unmarshal(data: bytes) -> bytes | None:
    """A legacy name ("medium", ...) or the object, decoded as PriceGranularityRaw."""
    it = _Iter(data)
    name = it.read_string()
    if it.next_token() != 0:
        it.report_error(b"Unmarshal", b"there are bytes left after unmarshal")
    if not it.failed and name is not None and name.decode("utf-8", "replace") in _LEGACY_GRANULARITIES:
        return None
    return _unmarshal_message(data, _PRICE_GRANULARITY_RAW)


def _price_granularity_ok(value: Any) -> bool:
    if value is None:
        return True
    if type(value) is str:
        return value in _LEGACY_GRANULARITIES
    return type(value) is dict and _ok(_PRICE_GRANULARITY_RAW.spec, value)


_INTERSTITIAL_KEYS = ("minwidthperc", "minheightperc")


def _interstitial_problem(value: Any) -> bytes | None:
    """ExtDeviceInt.UnmarshalJSON on a parsed value: each percentage a whole number 0..100."""
    for key in _INTERSTITIAL_KEYS:
        number = value.get(key) if type(value) is dict else None
        if type(number) is not int or not 0 <= number <= 100:
            return b"request.device.ext.prebid.interstitial.%s must be a number between 0 and 100" % key.encode()
    return None


def _interstitial_unmarshal(data: bytes) -> bytes | None:
    if not data:
        return b"request.device.ext.prebid.interstitial must have some data in it"
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        value = None
    return _interstitial_problem(value)


def _interstitial_ok(value: Any) -> bool:
    return value is None or _interstitial_problem(value) is None


_CUSTOM = {
    "openrtb_ext.PriceGranularity": (_price_granularity_unmarshal, _price_granularity_ok),
    "openrtb_ext.ExtDeviceInt": (_interstitial_unmarshal, _interstitial_ok),
}
assert set(_CUSTOM) == set(UNMARSHALERS)

_nodes: dict[str, _Node] = {}


def _node(go_type: str) -> _Node:
    """The decoder of a Go type written as in ortb_schema (compiled once)."""
    node = _nodes.get(go_type)
    if node is not None:
        return node
    if go_type.startswith("*"):
        node = _Pointer(_node(go_type[1:]))
    elif go_type.startswith("[]"):
        node = _Slice(go_type, _node(go_type[2:]))
    elif go_type.startswith("map["):
        key, _, elem = go_type[4:].partition("]")
        if key != "string" and NAMED.get(key) != "string":
            raise ValueError(f"map key type {key} not modelled")
        node = _Map(_node(elem))
    elif go_type in _CUSTOM:
        node = _Unmarshaler(*_CUSTOM[go_type])
    elif go_type in STRUCTS:
        struct = _Struct(go_type)
        _nodes[go_type] = struct  # before its fields: no struct here holds itself, but be safe
        struct.setup([(name, go_name, _node(field_type)) for name, go_name, field_type in STRUCTS[go_type]])
        return struct
    elif go_type in NAMED:
        node = _node(NAMED[go_type])
    elif go_type == "string":
        node = _STRING_NODE
    elif go_type in _INT_READERS:
        node = _Int(go_type)
    elif go_type in ("float64", "float32"):
        node = _Float(64 if go_type == "float64" else 32)
    elif go_type == "bool":
        node = _Bool()
    elif go_type == "json.RawMessage":
        node = _Raw()
    else:
        raise ValueError(f"Go type {go_type} not modelled")
    _nodes[go_type] = node
    return node


# PriceGranularity's UnmarshalJSON decodes the object as `type PriceGranularityRaw PriceGranularity`
_PRICE_GRANULARITY_RAW = _Struct("openrtb_ext.PriceGranularityRaw")
_PRICE_GRANULARITY_RAW.setup(
    [(name, go_name, _node(go_type)) for name, go_name, go_type in STRUCTS["openrtb_ext.PriceGranularity"]]
)


_I8_MIN, _I8_MAX, _I64_MIN, _I64_MAX = -(2**7), 2**7 - 1, -(2**63), 2**63 - 1
_STR_OR_NULL = frozenset({str, type(None)})
_NUM_OR_NULL = frozenset({int, float, type(None)})
_BOOL_OR_NULL = frozenset({bool, type(None)})
_INTS = frozenset({int})
_DICT_OR_NULL = frozenset({dict, type(None)})


def _ok_struct(spec: _Spec, value: dict[str, Any]) -> bool:
    """The fast check of a struct's object: its keys' values by kind (the common kinds inline)."""
    kinds = spec[1]
    for key, item in value.items():
        kind = kinds.get(key)
        if kind == _K_STR:
            if type(item) is not str and item is not None:
                return False
        elif kind is None:  # unknown, or a field named ignoring case (json-iterator folds case)
            lowered = key.lower()
            sub = spec[3].get(lowered)
            if sub is not None:
                if lowered in spec[4]:
                    return False  # on the way to an ext: the model decides, the ext lookups fold case too
                if not _ok(sub, item):
                    return False
        elif item is None or kind == _K_RAW:
            continue
        elif kind == _K_I64:
            if type(item) is not int or not _I64_MIN <= item <= _I64_MAX:
                return False
        elif kind == _K_I8:
            if type(item) is not int or not _I8_MIN <= item <= _I8_MAX:
                return False
        elif kind == _K_STRUCT:
            if type(item) is not dict or not _ok_struct(spec[2][key], item):
                return False
        elif kind == _K_LIST:
            if type(item) is not list or not _ok_items(spec[2][key][1], item):
                return False
        elif kind == _K_BOOL:
            if type(item) is not bool:
                return False
        elif kind == _K_NUM:
            if type(item) is not float and type(item) is not int:
                return False
        elif kind == _K_RAW_MAP:
            if type(item) is not dict:
                return False
        elif kind == _K_CUSTOM:
            if not spec[2][key][1](item):
                return False
        elif not _ok(spec[2][key], item):
            return False
    return True


def _ok(spec: _Spec, value: Any) -> bool:
    """The fast check: True when every typed value in ``value`` has its Go type. False when one does
    not, and also when a key on the way to an ext names its field only ignoring case (the model then
    decides, and request_type_error looks the exts up folding case as json-iterator does)."""
    if value is None:
        return True
    kind = spec[0]
    if kind == _K_STRUCT:
        return type(value) is dict and _ok_struct(spec, value)
    if kind == _K_STR:
        return type(value) is str
    if kind == _K_LIST:
        return type(value) is list and _ok_items(spec[1], value)
    if kind in (_K_I64, _K_I8, _K_INT):
        return type(value) is int and spec[1] <= value <= spec[2]
    if kind == _K_MAP:
        return type(value) is dict and _ok_items(spec[1], value.values())
    if kind == _K_RAW_MAP:
        return type(value) is dict
    if kind == _K_NUM:
        return type(value) is float or type(value) is int
    if kind == _K_BOOL:
        return type(value) is bool
    if kind == _K_RAW:
        return True
    return bool(spec[1](value))  # _K_CUSTOM


def _ok_items(spec: _Spec, items: Any) -> bool:
    """The fast check of a slice's elements or a map's values (scalars in C, by their types)."""
    kind = spec[0]
    if kind == _K_STR:
        return _STR_OR_NULL.issuperset(map(type, items))
    if kind == _K_NUM:
        return _NUM_OR_NULL.issuperset(map(type, items))
    if kind == _K_BOOL:
        return _BOOL_OR_NULL.issuperset(map(type, items))
    if kind == _K_RAW:
        return True
    if kind == _K_RAW_MAP:
        return _DICT_OR_NULL.issuperset(map(type, items))
    if kind in (_K_I64, _K_I8, _K_INT) and _INTS.issuperset(map(type, items)):
        return not items or (spec[1] <= min(items) and max(items) <= spec[2])
    if kind == _K_STRUCT:
        for item in items:
            if type(item) is dict:
                if not _ok_struct(spec, item):
                    return False
            elif item is not None:
                return False
        return True
    return all(_ok(spec, item) for item in items)


# --- the JSON text PBS-Go would have decoded ------------------------------------------------------------

_encode_string = json.JSONEncoder(ensure_ascii=False).encode


def _js_float(value: float) -> str:
    """A float as the client most likely wrote it: JavaScript's notation (``0.00001``, ``1e-7``,
    ``1e+21``); an integral float as ``X.0``, except beyond 64 bits, where orjson made the float from
    an integer literal and json-iterator sees digits."""
    text = repr(value)
    if not math.isfinite(value):
        return text
    if value.is_integer():
        if abs(value) >= 1e21:
            return text
        if abs(value) >= 2.0**63:
            return str(int(value))
        return text if "e" not in text else f"{int(value)}.0"
    if "e" not in text:
        return text
    if abs(value) >= 1e-6:
        return format(Decimal(text), "f")
    mantissa, _, exponent = text.partition("e")
    return f"{mantissa}e{int(exponent):+d}"


def _write_json(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(_encode_string(value))
    elif isinstance(value, dict):
        out.append("{")
        for index, (key, item) in enumerate(value.items()):
            out.append(',"' if index else '"')
            out.append(_encode_string(str(key))[1:])
            out.append(":")
            _write_json(item, out)
        out.append("}")
    elif isinstance(value, list | tuple):
        out.append("[")
        for index, item in enumerate(value):
            if index:
                out.append(",")
            _write_json(item, out)
        out.append("]")
    elif value is None:
        out.append("null")
    elif isinstance(value, bool):
        out.append("true" if value else "false")
    elif isinstance(value, int):
        out.append(str(int(value)))
    elif isinstance(value, float):
        out.append(_js_float(value))
    else:
        out.append(_encode_string(str(value)))


def _go_json(value: Any) -> bytes:
    """The JSON text of ``value`` (only on the error path): compact, in key order, numbers as a
    JavaScript client writes them (see _js_float)."""
    out: list[str] = []
    _write_json(value, out)
    return "".join(out).encode("utf-8", "surrogatepass")


def _model_message(value: Any, node: _Node) -> str | None:
    """The model's text for ``value`` decoded into ``node``'s type, None when it decodes."""
    try:
        data = _go_json(value)
    except RecursionError:
        return _text(_TOO_DEEP)
    message = _unmarshal_message(data, node)
    return None if message is None else _text(message)


def _text(message: bytes) -> str:
    return message.decode("utf-8", "replace")


def _type_error(value: Any, node: _Node) -> str | None:
    """``jsonutil.Unmarshal`` of ``value`` into ``node``'s type: PBS-Go's text, or None."""
    return None if _ok(node.spec, value) else _model_message(value, node)


def _go_get(obj: dict[str, Any], name: str) -> Any:
    """The value json-iterator puts in struct field ``name``: keys match ignoring case, the last wins."""
    value = None
    size = len(name)
    for key, item in obj.items():
        if len(key) == size and (key == name or key.lower() == name):
            value = item
    return value


# --- PBS-Go's flow ---------------------------------------------------------------------------------------

_BID_REQUEST = _node("openrtb2.BidRequest")
_NATIVE_REQUEST = _node("request.Request")
_EXT_MAP = _node("map[string]json.RawMessage")
_EXT_REQUEST_PREBID = _node("openrtb_ext.ExtRequestPrebid")
_SUPPLY_CHAIN = _node("openrtb2.SupplyChain")
_EXT_REGS_DSA = _node("openrtb_ext.ExtRegsDSA")
_INT8 = _node("int8")
_EXT_USER_PREBID = _node("openrtb_ext.ExtUserPrebid")
_EIDS = _node("[]openrtb2.EID")
_CONSENTED_IN = _node("openrtb_ext.ConsentedProvidersSettingsIn")
_CONSENTED_OUT = _node("openrtb_ext.ConsentedProvidersSettingsOut")
_EXT_IMP_PREBID = _node("openrtb_ext.ExtImpPrebid")
_EXT_IMP_DATA = _node("openrtb_ext.ExtImpData")
_EXT_APP_PREBID = _node("openrtb_ext.ExtAppPrebid")
_EXT_DEVICE_PREBID = _node("openrtb_ext.ExtDevicePrebid")

_AMP_TEXT = "request.site.ext.amp must be either 1, 0, or undefined"
_GDPR_TEXT = "gdpr must be an integer"

# (key in the ext map, Go type) in the order PBS-Go's RequestWrapper unmarshals them
_REQUEST_EXT_KEYS = (("prebid", _EXT_REQUEST_PREBID), ("schain", _SUPPLY_CHAIN))
_SOURCE_EXT_KEYS = (("schain", _SUPPLY_CHAIN),)
_USER_EXT_KEYS = (
    ("consent", _STRING_NODE),
    ("prebid", _EXT_USER_PREBID),
    ("eids", _EIDS),
    ("ConsentedProvidersSettings", _CONSENTED_IN),
    ("consented_providers_settings", _CONSENTED_OUT),
)
_IMP_EXT_KEYS = (("prebid", _EXT_IMP_PREBID), ("data", _EXT_IMP_DATA), ("tid", _STRING_NODE), ("gpid", _STRING_NODE))
_APP_EXT_KEYS = (("prebid", _EXT_APP_PREBID),)
_DEVICE_EXT_KEYS = (("prebid", _EXT_DEVICE_PREBID), ("cdep", _STRING_NODE))


def _ext_error(ext: Any, keys: tuple[tuple[str, _Node], ...]) -> str | None:
    """An ``ext`` as the RequestWrapper reads it: into ``map[string]json.RawMessage`` (only a value that
    is no object fails), then the named keys (case-sensitive; null skipped) into their types."""
    if type(ext) is not dict:
        return None if ext is None else _model_message(ext, _EXT_MAP)
    for key, node in keys:
        value = ext.get(key)
        if value is not None and not _ok(node.spec, value):
            error = _model_message(value, node)
            if error is not None:
                return error
    return None


def _regs_ext_error(ext: Any) -> str | None:
    error = _ext_error(ext, (("dsa", _EXT_REGS_DSA),))
    if error is not None or type(ext) is not dict:
        return error
    gdpr = ext.get("gdpr")
    if not _ok(_INT8.spec, gdpr):  # every value the check refuses fails to decode into *int8
        return _GDPR_TEXT
    usp = ext.get("us_privacy")
    return None if usp is None else _type_error(usp, _STRING_NODE)  # gpc: read leniently, never fails


_Getter = Callable[[dict[str, Any], str], Any]


def _field(get: _Getter, obj: Any, name: str) -> Any:
    """Field ``name`` of ``obj`` when ``obj`` is an object (else None)."""
    return get(obj, name) if type(obj) is dict else None


def _convert_up_error(request: dict[str, Any], get: _Getter) -> str | None:
    """``convertUpEnsureExt``: req.ext, req.source.ext, req.regs.ext, req.user.ext, each imp's ext."""
    error = _ext_error(get(request, "ext"), _REQUEST_EXT_KEYS)
    if error is not None:
        return "req.ext is invalid: " + error
    source = get(request, "source")
    if source is not None:
        error = _ext_error(_field(get, source, "ext"), _SOURCE_EXT_KEYS)
        if error is not None:
            return "req.source.ext is invalid: " + error
    regs = get(request, "regs")
    if regs is not None:
        error = _regs_ext_error(_field(get, regs, "ext"))
        if error is not None:
            return "req.regs.ext is invalid: " + error
    user = get(request, "user")
    if user is not None:
        error = _ext_error(_field(get, user, "ext"), _USER_EXT_KEYS)
        if error is not None:
            return "req.user.ext is invalid: " + error
    imps = get(request, "imp")
    if type(imps) is list:
        for index, imp in enumerate(imps):
            if type(imp) is dict:
                error = _ext_error(get(imp, "ext"), _IMP_EXT_KEYS)
                if error is not None:
                    return f"imp[{index}].imp.ext is invalid: {error}"
    return None


# --- public API ----------------------------------------------------------------------------------------------


def _without_mediatype_factors(request: Any) -> Any:
    """PBS-Java's ``bidadjustmentfactors.mediatypes`` (an object of factors, which hbserver supports) is no
    float for PBS-Go's ``map[string]float64``: the type check looks at the other factors only (the
    mediatypes are checked by ``bidadjust.validate_adjustment_factors``). A copy, only when present."""
    ext = request.get("ext") if type(request) is dict else None
    prebid = ext.get("prebid") if type(ext) is dict else None
    factors = prebid.get("bidadjustmentfactors") if type(prebid) is dict else None
    if type(factors) is not dict or "mediatypes" not in factors:
        return request
    factors = {key: value for key, value in factors.items() if key != "mediatypes"}
    return {**request, "ext": {**ext, "prebid": {**prebid, "bidadjustmentfactors": factors}}}


def request_type_error(request: dict[str, Any]) -> str | None:
    """PBS-Go's text for the first type error in ``request`` (parsed, stored data merged), in the order
    PBS-Go meets it: first decoding the ``openrtb2.BidRequest`` (json-iterator reads in document order,
    which orjson's dicts keep), then ``convertUpEnsureExt`` (``req.ext``, ``req.source.ext``,
    ``req.regs.ext``, ``req.user.ext``, ``imp[i].imp.ext`` each with its prefix). None when every typed
    value has its type. Keys match struct fields ignoring case, as json-iterator matches them (a request
    naming ``ext``, ``imp``, ``source``, ``regs`` or ``user`` in another case takes the model's way and
    has its exts looked up the same way); the ext maps' own keys (``prebid``, ``consent``, ...) are Go
    map keys, matched exactly. PBS-Go checks some things before this: ``imp_ext_prebid_error`` (on the
    body as received) and its stored-request id checks."""
    get: _Getter = dict.get
    request = _without_mediatype_factors(request)
    if type(request) is not dict or not _ok_struct(_BID_REQUEST.spec, request):
        message = _model_message(request, _BID_REQUEST)
        if message is not None:
            return message
        get = _go_get  # no type error, but a key named a field ignoring case
    return _convert_up_error(request, get)


def body_syntax_error(raw: bytes) -> str | None:
    """PBS-Go's text for a body it cannot decode into a BidRequest (``malformed`` gives
    ``expect { or n, but found m``; ``[1]`` gives ``expect { or n, but found [``; a body cut short or a
    broken value deeper in gives json-iterator's text for it). Meant for a body orjson refused or whose
    top level is not an object. None when json-iterator decodes the body and it is valid JSON (``null``:
    PBS-Go goes on with an empty request); a body json-iterator takes but orjson does not (bad UTF-8,
    say) gets a plain text naming the byte offset."""
    message = _unmarshal_message(raw, _BID_REQUEST)
    if message is not None and message is not _TOO_DEEP:
        return _text(message)
    try:
        orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        return f"invalid JSON at byte {exc.pos}: {exc.msg}"
    return None


def site_ext_error(request: dict[str, Any]) -> str | None:
    """``validateSite``'s ext part: ``site.ext`` not an object (json-iterator's text), or ``site.ext.amp``
    anything but 0, 1 or null (PBS-Go's one text for both its decode and its range check)."""
    ext = _field(_go_get, _field(_go_get, request, "site"), "ext")
    error = _ext_error(ext, ())
    if error is not None or type(ext) is not dict:
        return error
    amp = ext.get("amp")
    if amp is None or (type(amp) is int and 0 <= amp <= 1):
        return None
    return _AMP_TEXT


def app_ext_error(request: dict[str, Any]) -> str | None:
    """``validateApp``'s ``GetAppExt``: ``app.ext`` and ``app.ext.prebid`` (ExtAppPrebid), no prefix."""
    return _ext_error(_field(_go_get, _field(_go_get, request, "app"), "ext"), _APP_EXT_KEYS)


def device_ext_error(request: dict[str, Any]) -> str | None:
    """``GetDeviceExt`` (interstitials; cookie deprecation): ``device.ext``, ``device.ext.prebid``
    (with ExtDeviceInt's own texts for ``interstitial``) and ``device.ext.cdep``, no prefix. ``atts``
    is read leniently elsewhere and never fails."""
    return _ext_error(_field(_go_get, _field(_go_get, request, "device"), "ext"), _DEVICE_EXT_KEYS)


def native_request_type_error(payload: Any) -> str | None:
    """``fillAndValidateNative``'s decode of ``imp.native.request`` (``payload``: its parsed JSON) into
    the native1 ``request.Request``: json-iterator's text, no prefix, or None."""
    return _type_error(payload, _NATIVE_REQUEST)


def native_request_text_error(text: str) -> str | None:
    """As :func:`native_request_type_error` for the request string itself (one that is not JSON)."""
    message = _unmarshal_message(text.encode("utf-8", "surrogatepass"), _NATIVE_REQUEST)
    return None if message is None else _text(message)


def imp_ext_prebid_error(request: dict[str, Any]) -> str | None:
    """PBS-Go's first check of all (``parseImpInfo``, on the body as received, before stored data):
    each ``imp[i].ext.prebid`` decoded into ExtImpPrebid, its text without prefix. PBS-Go finds the
    value with jsonparser: exact keys, and a string value stands for its content (so the string
    ``"{}"`` passes and ``"x"`` fails with ``expect { or n, but found x``)."""
    imps = request.get("imp")
    for imp in imps if type(imps) is list else ():
        ext = imp.get("ext") if type(imp) is dict else None
        if type(ext) is not dict or "prebid" not in ext:
            continue
        prebid = ext["prebid"]
        if type(prebid) is str:
            data = _encode_string(prebid)[1:-1].encode("utf-8", "surrogatepass")
            message = _unmarshal_message(data, _EXT_IMP_PREBID)
            error = None if message is None else _text(message)
        else:
            error = _type_error(prebid, _EXT_IMP_PREBID)
        if error is not None:
            return error
    return None


def regs_dsa_error(value: Any) -> str | None:
    """Why ``value`` does not decode into PBS-Go's ``openrtb_ext.ExtRegsDSA`` (``regs.ext.dsa``); None when
    it does. Checks an account's ``privacy.dsa.default`` as PBS-Go's ``config.UnpackDSADefault`` does."""
    return _ext_error({"dsa": value}, (("dsa", _EXT_REGS_DSA),))
