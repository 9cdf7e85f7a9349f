"""JSON written by orjson, whatever strings the data holds: a name read from the disk that is not UTF-8 (a
folder of bytes Python keeps as lone surrogates) is written escaped, as `ls -b` shows it ("\\xff"), where
orjson would raise TypeError and the command end in a traceback. Data of valid strings (every file the
workbench writes) goes through orjson once, as before."""

from __future__ import annotations

import orjson

TYPE_CHECKING = False  # not typing's: a report starts faster without importing it
if TYPE_CHECKING:
    from typing import Any


def dumps(data: Any, option: int = 0, default: Any = None) -> bytes:
    try:
        return orjson.dumps(data, option=option, default=default)
    except TypeError:  # a str that is not UTF-8 (or a type default cannot take: raised again below)
        return orjson.dumps(_escaped(data), option=option, default=default)


def _escaped(data: Any) -> Any:
    if isinstance(data, str):
        return data.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    if isinstance(data, dict):
        return {_escaped(k): _escaped(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [_escaped(v) for v in data]
    return data
