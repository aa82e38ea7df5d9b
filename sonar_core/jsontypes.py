"""The one recursive JSON type of the package, for content that really is arbitrary JSON from outside.

Use these only where the shape is not ours to declare: an HTTP body before it is validated, an OpenAI-style
response, a dataset row's free fields, a plugin's parameters. Structured data of our own gets a real type
instead (a dataclass for an internal record, a ``TypedDict`` for a JSON shape we write or read).

``JsonValue`` is what ``json.loads`` can return; ``JsonObject`` is a JSON object (what ``json.loads`` returns
for ``{...}``). Both are plain aliases for the type checker: nothing is converted or checked at run time.
"""

from __future__ import annotations

from typing import TypeAlias, Union

__all__ = ["JsonValue", "JsonObject", "JsonArray"]

#: Any value ``json.loads`` can return.
JsonValue: TypeAlias = Union[str, int, float, bool, None, list["JsonValue"], dict[str, "JsonValue"]]
#: A JSON object: keys are strings, values any JSON value.
JsonObject: TypeAlias = dict[str, JsonValue]
#: A JSON array.
JsonArray: TypeAlias = list[JsonValue]
