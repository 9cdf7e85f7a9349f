"""Forms compiled from a format's JSON Schema: schema -> field specs.

A pure step, without any widget: the editor renders whatever specs come out, so
no form is written by hand and a schema change changes the form."""

from __future__ import annotations

import re
from collections.abc import Callable
from copy import deepcopy
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from workbench.formats import pointer as ptr
from workbench.formats.dialect import Format


class KindName(StrEnum):
    """The kinds of field a schema compiles to: the one list of their names.

    The core produces them (_Compiler.compile) and knows each one's blank value
    (_BLANKS); the form registers one FieldKind per name, which builds its
    widgets (workbench/tui/widgets/field_kinds.py). docs/form-fields.md has the
    table."""

    TEXT = "text"  # a string on one line
    LONG_TEXT = "long_text"  # a string written in paragraphs (LONG_TEXTS)
    ENUM = "enum"  # one of the options
    BOOL = "bool"
    INTEGER = "integer"
    NUMBER = "number"
    STRING_LIST = "string_list"  # an array of scalars, one line each
    OBJECT_LIST = "object_list"  # an array of objects (or of oneOf kinds)
    KEY_VALUE = "key_value"  # an object with free keys (additionalProperties)
    KINDS = "kinds"  # a oneOf of objects, told apart by a constant field
    OBJECT = "object"  # an object with named properties
    ANY = "any"  # anything else, edited as JSON


# Short names for the members, as the core and its tests have always used them.
TEXT, LONG_TEXT, ENUM, BOOL, INTEGER, NUMBER = (
    KindName.TEXT,
    KindName.LONG_TEXT,
    KindName.ENUM,
    KindName.BOOL,
    KindName.INTEGER,
    KindName.NUMBER,
)
STRING_LIST, OBJECT_LIST, KEY_VALUE, KINDS, OBJECT, ANY = (
    KindName.STRING_LIST,
    KindName.OBJECT_LIST,
    KindName.KEY_VALUE,
    KindName.KINDS,
    KindName.OBJECT,
    KindName.ANY,
)

# Texts people write in paragraphs get a multi-line editor.
LONG_TEXTS = {
    "prompt",
    "expected_output",
    "rubric",
    "expect",
    "reference_summary",
    "description",
    "expected_behavior",
    "reasoning",
    "feedback",
    "body",
}


@dataclass(frozen=True)
class Kind:
    """One alternative of a oneOf, told apart by the constant value of `key`."""

    label: str
    key: str | None
    value: Any
    spec: FieldSpec


@dataclass(frozen=True)
class FieldSpec:
    name: str
    kind: KindName
    help: str | None = None
    required: bool = False
    default: Any = None
    options: tuple = ()
    minimum: float | None = None
    maximum: float | None = None
    max_length: int | None = None  # shown as a live count while typing
    item: FieldSpec | None = None  # lists: each item; key/value: each value
    fields: tuple[FieldSpec, ...] = ()  # objects
    kinds: tuple[Kind, ...] = ()  # oneOf
    notes: tuple[str, ...] = ()  # rules shown while editing
    hidden_when: tuple[str, Any] | None = None  # (sibling, value): the field does not apply then
    closed: bool = False  # objects: no keys beyond `fields` allowed
    const: Any = None
    elsewhere: tuple[str, ...] = ()  # objects: members edited elsewhere (a suite's case lists), not as fields

    @property
    def title(self) -> str:
        return self.name.replace("_", " ") if self.name else ""

    def field(self, name: str) -> FieldSpec | None:
        return next((f for f in self.fields if f.name == name), None)

    def kind_for(self, value: Any) -> Kind | None:
        """The alternative a value is (or most looks like), for oneOf specs."""
        if not self.kinds:
            return None
        if isinstance(value, dict):
            for kind in self.kinds:
                if kind.key and value.get(kind.key) == kind.value:
                    return kind
        return None

    def blank(self) -> Any:
        """A new value for this field: its default, or the emptiest valid-looking value."""
        if self.default is not None:
            return self.default
        make = _BLANKS.get(self.kind)
        if make is not None:
            return make(self)
        return self.const if self.const is not None else ""


def _blank_number(spec: FieldSpec) -> int:
    return int(spec.minimum) if spec.minimum is not None and spec.minimum > 0 else 0


# The blank value of each kind that has one of its own; the others (texts, ANY)
# start as their constant, or as "".
_BLANKS: dict[KindName, Callable[[FieldSpec], Any]] = {
    KindName.STRING_LIST: lambda spec: [],
    KindName.OBJECT_LIST: lambda spec: [],
    KindName.KEY_VALUE: lambda spec: {},
    KindName.OBJECT: lambda spec: {f.name: f.blank() for f in spec.fields if f.required},
    KindName.KINDS: lambda spec: spec.kinds[0].spec.blank() if spec.kinds else {},
    KindName.BOOL: lambda spec: False,
    KindName.INTEGER: _blank_number,
    KindName.NUMBER: _blank_number,
    KindName.ENUM: lambda spec: spec.options[0] if spec.options else "",
}


class _Compiler:
    def __init__(self, schema: dict) -> None:
        self.root = schema

    def resolve(self, node: Any) -> dict:
        seen = 0
        while isinstance(node, dict) and "$ref" in node and seen < 32:
            node = ptr.resolve(self.root, ptr.split(node["$ref"].lstrip("#")))
            seen += 1
        return node if isinstance(node, dict) else {}

    def compile(self, node: Any, name: str = "", required: bool = False) -> FieldSpec:
        ref = node.get("$ref") if isinstance(node, dict) else None
        node = self.resolve(node)
        common = {"name": name, "help": node.get("description"), "required": required, "default": node.get("default")}
        if "oneOf" in node and all(isinstance(b, dict) and ("$ref" in b or "properties" in b) for b in node["oneOf"]):
            kinds = tuple(self.kind(branch) for branch in node["oneOf"])
            return FieldSpec(kind=KINDS, kinds=kinds, **common)
        types = node.get("type")
        if isinstance(types, list):
            types = next((t for t in types if t != "null"), None)
        if "const" in node:
            return FieldSpec(kind=TEXT, const=node["const"], **common)
        if "enum" in node:
            return FieldSpec(kind=ENUM, options=tuple(node["enum"]), **common)
        if types == "object" or "properties" in node:
            return self.object(node, common, ref)
        if types == "array":
            item = self.compile(node.get("items", {}), "")
            if item.kind in (TEXT, LONG_TEXT) and not item.const:
                return FieldSpec(kind=STRING_LIST, item=item, **common)
            return FieldSpec(kind=OBJECT_LIST if item.kind in (OBJECT, KINDS) else STRING_LIST, item=item, **common)
        if types == "boolean":
            return FieldSpec(kind=BOOL, **common)
        if types in ("integer", "number"):
            return FieldSpec(
                kind=INTEGER if types == "integer" else NUMBER,
                minimum=node.get("minimum"),
                maximum=node.get("maximum"),
                **common,
            )
        if types == "string":
            return FieldSpec(
                kind=LONG_TEXT if name in LONG_TEXTS else TEXT,
                max_length=node.get("maxLength"),
                **common,
            )
        return FieldSpec(kind=ANY, **common)

    def object(self, node: dict, common: dict, ref: str | None) -> FieldSpec:
        properties = node.get("properties") or {}
        extra = node.get("additionalProperties")
        if not properties:
            item = self.compile(extra, "") if isinstance(extra, dict) else FieldSpec("", ANY)
            return FieldSpec(kind=KEY_VALUE, item=item, **common)
        required = set(node.get("required") or ())
        hidden = self.hidden_fields(node)
        fields = []
        for key, sub in properties.items():
            spec = self.compile(sub, key, key in required)
            if key in hidden:
                other, value, note = hidden[key]
                spec = _replace(spec, hidden_when=(other, value), notes=spec.notes + (note,))
            fields.append(spec)
        notes = tuple(self.object_notes(node))
        return FieldSpec(kind=OBJECT, fields=tuple(fields), notes=notes, closed=extra is False, **common)

    def hidden_fields(self, node: dict) -> dict[str, tuple[str, Any, str]]:
        """if X == V then not required [Y]: Y does not apply while X is V."""
        out = {}
        for rule in node.get("allOf") or ():
            condition, then = rule.get("if") or {}, rule.get("then") or {}
            forbidden = (then.get("not") or {}).get("required") or ()
            for other, sub in (condition.get("properties") or {}).items():
                if "const" not in sub:
                    continue
                value = sub["const"]
                options = ((node.get("properties") or {}).get(other) or {}).get("enum") or ()
                rest = [o for o in options if o != value]
                when = f"{other} is {rest[0]}" if len(rest) == 1 else f"{other} is not {value}"
                for name in forbidden:
                    out[name] = (other, value, f"only when {when}")
        return out

    def object_notes(self, node: dict) -> list[str]:
        notes = []
        for keyword, words in (("anyOf", "needs at least one of"), ("oneOf", "needs exactly one of")):
            branches = node.get(keyword) or ()
            names = [b["required"][0] for b in branches if isinstance(b, dict) and len(b.get("required") or ()) == 1]
            if names and len(names) == len(branches):
                notes.append(f"{words}: {', '.join(names)}")
        return notes

    def kind(self, branch: dict) -> Kind:
        spec = self.compile(branch)
        type_field = spec.field("type")
        if type_field is not None and type_field.const is not None:
            return Kind(str(type_field.const), "type", type_field.const, spec)
        label = branch.get("$ref", "form").rsplit("/", 1)[-1]
        return Kind(label, None, None, spec)


def _replace(spec: FieldSpec, **changes: Any) -> FieldSpec:
    from dataclasses import replace

    return replace(spec, **changes)


def compile_schema(schema: dict, at: str = "") -> FieldSpec:
    """The field spec of the schema node at a JSON Pointer into the schema."""
    compiler = _Compiler(schema)
    node = ptr.resolve(schema, ptr.split(at)) if at else schema
    return compiler.compile(node)


def case_spec(fmt: Format, case_list_pointer: str) -> FieldSpec:
    case_list = next(c for c in fmt.cases if c.pointer == case_list_pointer)
    return compile_schema(_schema_of(fmt), case_list.item_schema)


def document_spec(fmt: Format) -> FieldSpec:
    """The document's own fields, without its case lists (those get a form per case)."""
    spec = compile_schema(_schema_of(fmt))
    case_keys = {ptr.split(c.pointer) for c in fmt.cases}
    return _strip(spec, case_keys, ())


def _schema_of(fmt: Format) -> dict:
    schema = fmt.schema
    if schema is None:  # only SKILL.md has none, and its form has a schema of its own
        raise ValueError(f"{fmt.title} has no schema to build a form from")
    return schema


def _strip(spec: FieldSpec, case_keys: set, here: tuple) -> FieldSpec:
    fields = []
    elsewhere = [key[-1] for key in case_keys if len(key) == len(here) + 1 and key[:-1] == here]
    for sub in spec.fields:
        tokens = here + (sub.name,)
        if tokens in case_keys:
            continue
        if sub.kind == OBJECT and any(k[: len(tokens)] == tokens for k in case_keys):
            sub = _strip(sub, case_keys, tokens)
        fields.append(sub)
    return _replace(spec, fields=tuple(fields), elsewhere=tuple(sorted(elsewhere)))


def fresh_id(current: Any, taken: set) -> Any:
    """An id for a copy that none of `taken` has: integers the next after the
    largest; text `<id>-copy`, then `<id>-copy-2`, ... (a copy of a copy counts on)."""
    if isinstance(current, int) and not isinstance(current, bool):
        return max([i for i in taken if isinstance(i, int) and not isinstance(i, bool)], default=0) + 1
    base = re.sub(r"-copy(-\d+)?$", "", str(current))
    candidate, number = f"{base}-copy", 1
    while candidate in taken:
        number += 1
        candidate = f"{base}-copy-{number}"
    return candidate


def copy_of(item: Any, siblings: list) -> Any:
    """A copy of a list item to insert beside it: its id (when it has one) made unique among its siblings."""
    copied = deepcopy(item)
    if isinstance(copied, dict) and copied.get("id") not in (None, ""):
        copied["id"] = fresh_id(
            copied["id"], {s.get("id") for s in siblings if isinstance(s, dict) and isinstance(s.get("id"), (str, int))}
        )
    return copied


def switch_kind(value: dict, target: Kind, shared: tuple[str, ...] = ("id",)) -> dict:
    """The value re-made as another kind: the fields the kinds share (id) are kept,
    the kind's own required fields start blank."""
    new = {name: value[name] for name in shared if name in value and target.spec.field(name)}
    for spec in target.spec.fields:
        if spec.name == target.key:
            new[spec.name] = target.value
        elif spec.required and spec.name not in new:
            new[spec.name] = spec.blank()
    return {k: new[k] for k in [f.name for f in target.spec.fields] if k in new}
