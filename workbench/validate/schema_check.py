"""Schema validation with jsonschema-rs, and its failures in a person's words:
what was expected and what was found, at the pointer of the offending value.

Formats are not asserted (as in a plain Draft 7 validator), so we accept and
reject exactly what the seed schemas do."""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable
from functools import cache
from typing import Any

import jsonschema_rs

from workbench.formats import pointer as ptr
from workbench.formats.dialect import Format, load_schema
from workbench.validate.diagnostic import ERROR, Diagnostic, did_you_mean


@cache
def _validator(schema_file: str, sub_pointer: str = "") -> jsonschema_rs.Draft7Validator:
    schema = load_schema(schema_file)
    if sub_pointer:
        # Validate one case on its own: a wrapper whose $ref points into the full
        # schema, so its definitions still resolve.
        root = {k: v for k, v in schema.items() if k != "$id"}
        schema = {
            "definitions": {**schema.get("definitions", {}), "__root__": root},
            "$ref": "#/definitions/__root__" + sub_pointer,
        }
    return jsonschema_rs.Draft7Validator(schema, validate_formats=False)


def check(fmt: Format, data: Any, sub_schema: str = "", base: tuple[str, ...] = ()) -> list[Diagnostic]:
    """Diagnostics for data against the format's schema (or one of its sub-schemas,
    for data found at `base` in the document)."""
    if not fmt.schema_file:
        return []
    validator = _validator(fmt.schema_file, sub_schema)
    if validator.is_valid(data):  # the fast path: a valid suite costs one Rust pass
        return []
    explainer = _Explainer(fmt, base)
    for err in validator.iter_errors(data):
        explainer.explain(err)
    return explainer.out


class _Explainer:
    def __init__(self, fmt: Format, base: tuple[str, ...]) -> None:
        self.fmt = fmt
        self.schema = fmt.schema or {}
        self.base = base
        self.out: list[Diagnostic] = []

    def emit(self, tokens: tuple[str, ...], message: str) -> None:
        self.out.append(Diagnostic(ERROR, ptr.join(tokens), message))

    def tokens(self, err: jsonschema_rs.ValidationError) -> tuple[str, ...]:
        return self.base + tuple(str(t) for t in err.instance_path)

    def hint(self, err: jsonschema_rs.ValidationError) -> str | None:
        path = "/".join(str(p) for p in err.schema_path)
        for key, text in self.fmt.hints.items():
            if path == key or path.endswith("/" + key):
                return text
        return None

    def node(self, schema_path: Iterable[str | int]) -> Any:
        """The schema node at a schema path (which jsonschema-rs gives resolved)."""
        node: Any = self.schema
        path = list(schema_path)
        if path and path[0] == "definitions" and len(path) > 1 and path[1] == "__root__":
            path = path[2:]
        for part in path:
            try:
                node = node[int(part)] if isinstance(node, list) else node[str(part)]
            except (KeyError, IndexError, ValueError, TypeError):
                return None
        return node

    def explain(self, err: jsonschema_rs.ValidationError, prefix: str = "") -> None:
        kind = type(err.kind).__name__
        facts = err.kind.as_dict()
        tokens = self.tokens(err)
        found = describe(err.instance)
        hint = self.hint(err)
        if kind == "AdditionalProperties":
            parent = self.node(list(err.schema_path)[:-1]) or {}
            allowed = list((parent.get("properties") or {}).keys())
            for name in facts.get("unexpected", []):
                message = f'unexpected property "{name}"'
                if allowed:
                    message += "; allowed here: " + ", ".join(allowed)
                    message += did_you_mean(name, allowed)
                self.emit(tokens + (name,), prefix + message)
            return
        if kind == "OneOfNotValid":
            self.explain_one_of(err, tokens, found, hint, prefix)
            return
        if hint and kind == "Pattern":
            message = f"{hint}, found {found}"
        else:
            message = hint or self.describe_kind(kind, facts, err, found)
        self.emit(tokens, prefix + message)

    def describe_kind(self, kind: str, facts: dict, err: jsonschema_rs.ValidationError, found: str) -> str:
        value = err.instance
        if kind == "Type":
            return f"expected {_types(facts.get('types', []))}, found {found}"
        if kind == "Required":
            name = facts.get("property")
            return f'missing required property "{name}"'
        if kind == "Enum":
            options = facts.get("options") or []
            text = f"expected one of {', '.join(json.dumps(o) for o in options)}; found {found}"
            if isinstance(value, str):
                text += did_you_mean(value, [o for o in options if isinstance(o, str)])
            return text
        if kind == "Constant":
            expected = facts.get("expected_value")
            return f"expected {json.dumps(expected)}, found {found}"
        if kind == "Pattern":
            return f"expected a string matching {facts.get('pattern')}, found {found}"
        if kind in ("MinLength", "MaxLength"):
            limit = facts.get("limit")
            bound = "at least" if kind == "MinLength" else "at most"
            return f"expected {bound} {limit} character{'s' if limit != 1 else ''}, found {found}"
        if kind in ("MinItems", "MaxItems"):
            limit = facts.get("limit")
            bound = "at least" if kind == "MinItems" else "at most"
            return f"expected {bound} {limit} item{'s' if limit != 1 else ''}, found {found}"
        if kind in ("MinProperties", "MaxProperties"):
            limit = facts.get("limit")
            bound = "at least" if kind == "MinProperties" else "at most"
            return f"expected {bound} {limit} entr{'ies' if limit != 1 else 'y'}, found {found}"
        if kind in ("Minimum", "Maximum", "ExclusiveMinimum", "ExclusiveMaximum"):
            sign = {"Minimum": ">=", "Maximum": "<=", "ExclusiveMinimum": ">", "ExclusiveMaximum": "<"}[kind]
            return f"expected a number {sign} {facts.get('limit')}, found {found}"
        if kind == "UniqueItems":
            seen: list = []
            dup = None
            for item in value if isinstance(value, list) else []:
                if item in seen:
                    dup = item
                    break
                seen.append(item)
            return f"expected unique items, found {json.dumps(dup)} more than once"
        if kind == "Not":
            schema = facts.get("schema")
            if isinstance(schema, dict) and list(schema) == ["required"]:
                names = ", ".join(f'"{n}"' for n in schema["required"])
                return f"{names} is not allowed here"
            return "not allowed here"
        if kind == "AnyOf":
            branches = self.node(err.schema_path) or []
            required = [b.get("required") for b in branches if isinstance(b, dict)]
            if required and all(r and len(r) == 1 for r in required):
                return "expected at least one of: " + ", ".join(r[0] for r in required if r)
            return "expected it to satisfy at least one of the allowed forms"
        if kind == "OneOfMultipleValid":
            return "expected exactly one of the allowed forms, but it fits more than one"
        if kind == "FalseSchema":
            return "no value is allowed here"
        return err.message

    def explain_one_of(
        self, err: jsonschema_rs.ValidationError, tokens: tuple[str, ...], found: str, hint: str | None, prefix: str
    ) -> None:
        branches = self.node(err.schema_path) or []
        required = [b.get("required") for b in branches if isinstance(b, dict) and set(b) == {"required"}]
        if hint or (required and len(required) == len(branches)):
            names = ", ".join(r[0] for r in required if r)
            self.emit(tokens, prefix + (hint or f"expected exactly one of: {names}"))
            return
        labels = [self.label(b) for b in branches]
        context = err.kind.as_dict().get("context") or []
        best = self.closest(err.instance, labels, context)
        noun = str(list(err.schema_path)[-2]) if len(err.schema_path) >= 2 else "value"
        message = f"{noun} matches none of the kinds {', '.join(labels)}"
        if best is None:
            self.emit(tokens, prefix + message + f"; found {found}")
            return
        label = labels[best]
        message += f"; it most resembles {label}"
        kind_value = err.instance.get("type") if isinstance(err.instance, dict) else None
        if isinstance(kind_value, str) and kind_value != label:
            message += f' (type is "{kind_value}"; did you mean "{label}"?)'
        branch_errors = [e for e in context[best] if type(e.kind).__name__ != "Constant"]
        here = [e for e in branch_errors if tuple(e.instance_path) == tuple(err.instance_path)]
        deeper = [e for e in branch_errors if e not in here]
        lacks = [e.kind.as_dict().get("property") for e in here if type(e.kind).__name__ == "Required"]
        if lacks:
            message += ", which lacks " + ", ".join(f'"{name}"' for name in lacks)
        others: list[str] = []
        for sub in here:
            if type(sub.kind).__name__ != "Required":
                sub_explainer = _Explainer(self.fmt, self.base)
                sub_explainer.explain(sub)
                others.extend(d.message for d in sub_explainer.out)
        if others:
            message += f"; as {label}: " + "; ".join(others)
        if deeper:
            inner = sorted({ptr.join(str(t) for t in e.instance_path[len(err.instance_path) :]) for e in deeper})
            message += f"; see the problem{'s' if len(inner) > 1 else ''} at {', '.join(i.lstrip('/') for i in inner)}"
        self.emit(tokens, prefix + message)
        for sub in deeper:
            self.explain(sub, prefix=f"as {label}: ")

    def label(self, branch: Any) -> str:
        if isinstance(branch, dict) and "$ref" in branch:
            name = branch["$ref"].rsplit("/", 1)[-1]
            target = (self.schema.get("definitions") or {}).get(name, {})
            kind = ((target.get("properties") or {}).get("type") or {}).get("const")
            return kind or name
        return "form"

    @staticmethod
    def closest(instance: Any, labels: list[str], context: list) -> int | None:
        if not labels or len(context) != len(labels):
            return None
        kind_value = instance.get("type") if isinstance(instance, dict) else None
        if kind_value in labels:
            return labels.index(kind_value)

        def score(i: int) -> tuple:
            similarity = difflib.SequenceMatcher(None, str(kind_value or ""), labels[i]).ratio()
            return (-similarity, len(context[i]))

        return min(range(len(labels)), key=score)


def describe(value: Any) -> str:
    """A value in a few words: its type, and itself when short."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"the integer {value}"
    if isinstance(value, float):
        return f"the number {value:g}"
    if isinstance(value, str):
        if not value:
            return "an empty string"
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"the string {json.dumps(shown)}"
    if isinstance(value, list):
        return f"an array of {len(value)} item{'s' if len(value) != 1 else ''}"
    if isinstance(value, dict):
        return "an object" if value else "an empty object"
    return type(value).__name__


def _types(types: list) -> str:
    words = {
        "object": "an object",
        "array": "an array",
        "string": "a string",
        "integer": "an integer",
        "number": "a number",
        "boolean": "true or false",
        "null": "null",
    }
    return " or ".join(words.get(t, t) for t in types) or "another type"
