"""How PBS-Java's object mapper reads a module's account configuration (Jackson's default coercions).

The correction modules and the rich media filter read their account section with Jackson
(``ObjectMapperProvider``): a ``boolean`` takes ``true``/``false``, a number (0 is false), the
strings ``"true"``/``"True"``/``"TRUE"`` (and the same for false), and null or an empty string as
false (null for a ``Boolean``); anything else fails with Jackson's "Cannot deserialize value of
type ..." message, which the correction modules report as the hook's failure.
"""

from __future__ import annotations

from typing import Any

# Java's String.trim() strips every character up to the space
_JAVA_TRIM = "".join(chr(code) for code in range(0x21))
_TRUE = frozenset({"true", "True", "TRUE"})
_FALSE = frozenset({"false", "False", "FALSE"})
_BOOLEAN_TEXTS = ': only "true"/"True"/"TRUE" or "false"/"False"/"FALSE" recognized'


class JacksonError(ValueError):
    """A value Jackson would not convert (its message names the type, the value's shape and the key)."""


def _shape(value: Any) -> str:
    if isinstance(value, dict):
        return "Object value (token `JsonToken.START_OBJECT`)"
    if isinstance(value, list):
        return "Array value (token `JsonToken.START_ARRAY`)"
    if isinstance(value, float):
        return "Floating-point value (token `JsonToken.VALUE_NUMBER_FLOAT`)"
    return f"String {_quoted(value)}"


def _quoted(value: Any) -> str:
    return '"' + str(value) + '"'


def fail(java_type: str, value: Any, key: str, owner: str, detail: str = "") -> JacksonError:
    """Jackson's message for ``value`` at ``owner["key"]`` that is no ``java_type``."""
    return JacksonError(
        f"Cannot deserialize value of type `{java_type}` from {_shape(value)}{detail}"
        f' (through reference chain: {owner}["{key}"])'
    )


def read_boolean(value: Any, key: str, owner: str, *, boxed: bool = False) -> bool | None:
    """A Java ``boolean`` (``boxed``: ``Boolean``, which keeps null) as Jackson reads ``value``."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value != 0
    if isinstance(value, str):
        text = value.strip(_JAVA_TRIM)
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        if text and text != "null":
            raise fail("java.lang.Boolean" if boxed else "boolean", value, key, owner, _BOOLEAN_TEXTS)
        value = None
    if value is None:
        return None if boxed else False
    raise fail("java.lang.Boolean" if boxed else "boolean", value, key, owner)


def read_string(value: Any, key: str, owner: str) -> str | None:
    """A Java ``String`` as Jackson reads ``value`` (scalars become their text)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    raise fail("java.lang.String", value, key, owner)


def read_string_list(value: Any, key: str, owner: str) -> list[str | None] | None:
    """A ``List<String>``: an array, or one scalar taken as a list of one (ACCEPT_SINGLE_VALUE_AS_ARRAY)."""
    if value is None:
        return None
    if isinstance(value, list):
        return [read_string(item, key, owner) for item in value]
    if isinstance(value, dict):
        raise fail("java.util.ArrayList<java.lang.String>", value, key, owner)
    return [read_string(value, key, owner)]


def read_object(value: Any, java_type: str, key: str, owner: str) -> dict[str, Any] | None:
    """A nested configuration object: a JSON object or null."""
    if value is None or isinstance(value, dict):
        return value
    raise fail(java_type, value, key, owner)
