"""The JSON Schema of the operation language, derived from its classes, and checks against it.

The language's JSON form (:func:`reference_model.language.to_json`) is the kit's one contract: adapters,
protocol servers, replay files and Spark rows all speak it.  This is its schema (draft 7, understood by every
maintained validator in every language a server may be written in); the JSON-lines protocol's message schemas
(``adapters/subprocess/schemas/``) refer to it by its ``$id``, and the replay files are checked against it.
"""

from __future__ import annotations

import typing
from functools import lru_cache

import attrs

from reference_model import language as L

#: Draft 7: understood by every maintained validator, in every language a server may be written in.
DIALECT = "http://json-schema.org/draft-07/schema#"
#: The schema's ``$id``: the protocol's messages refer to its ``$defs`` by it.
LANGUAGE_ID = "urn:mqconform:protocol:1:language"


def _pairs() -> dict:
    return {"type": "array", "items": {
        "type": "array", "items": [{"type": "string"}, {"type": ["integer", "string", "boolean", "null"]}],
        "additionalItems": False, "minItems": 2}}


def _type_schema(t) -> dict:
    if t is int:
        return {"type": "integer"}
    if t is bool:
        return {"type": "boolean"}
    if t is str:
        return {"type": "string"}
    if t is tuple:
        return {"type": "array", "items": {"type": "string"}}
    if isinstance(t, type) and t.__name__ in L.types():
        return {"$ref": f"#/$defs/{t.__name__}"}
    args = typing.get_args(t)
    if args:   # a union such as int | IntRange or X | None
        return {"anyOf": [{"type": "null"} if a is type(None) else _type_schema(a) for a in args]}
    raise TypeError(f"no schema for {t!r}")


def _class_schema(cls: type) -> dict:
    hints = typing.get_type_hints(cls)
    props: dict = {"type": {"const": cls.__name__}}
    required = ["type"]
    for a in attrs.fields(cls):
        if a.name == "attrs":
            props[a.name] = _pairs() if cls is not L.Observation else {"anyOf": [_pairs(), {"type": "null"}]}
        else:
            props[a.name] = _type_schema(hints[a.name])
        if a.default is attrs.NOTHING:
            required.append(a.name)
    doc = " ".join((cls.__doc__ or "").split())
    return {"description": doc, "type": "object", "properties": props, "required": required,
            "additionalProperties": False}


def language_schema() -> dict:
    """The schema: one definition per type of the language, and ``Op``, any operation."""
    defs = {name: _class_schema(cls) for name, cls in sorted(L.types().items())}
    defs["Op"] = {"description": "Any operation of the language.",
                  "oneOf": [{"$ref": f"#/$defs/{c.__name__}"} for c in sorted(L.OPERATIONS, key=lambda c: c.__name__)]}
    return {"$schema": DIALECT, "$id": LANGUAGE_ID,
            "title": "The operation language: operations and observations in their JSON form",
            "$defs": defs}


@lru_cache(maxsize=1)
def _defs() -> dict:
    return language_schema()["$defs"]


def with_language_inside(schema: dict) -> dict:
    """``schema`` made self-contained: its references into the language (``LANGUAGE_ID#/$defs/...``) point to the
    language's definitions, copied into it (as a compiled check, which resolves no other document, needs)."""
    def local(node):
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith(LANGUAGE_ID + "#"):
                node = {**node, "$ref": ref[len(LANGUAGE_ID):]}
            return {k: local(v) for k, v in node.items()}
        if isinstance(node, list):
            return [local(v) for v in node]
        return node

    return {**local(schema), "$defs": _defs()}


def term_problem(term, kind: type) -> tuple[str, str] | None:
    """Why ``term`` (the JSON form of an operation, ``kind`` ``L.Op``, or of an observation, ``L.Observation``)
    is not one of the language: (the place inside it, "" for the whole term; why, one line), or None."""
    from jsonschema import Draft7Validator

    name = term.get("type") if isinstance(term, dict) else None
    cls = L.types().get(name) if isinstance(name, str) else None
    if cls is None or not issubclass(cls, kind):
        return "", f"{name!r} is not {'an operation' if kind is L.Op else 'an observation'} of the language"
    checker = Draft7Validator({"$ref": f"#/$defs/{name}", "$defs": _defs()})
    for err in checker.iter_errors(term):
        return "/".join(str(p) for p in err.absolute_path), " ".join(err.message.split())[:160]
    return None


def one_line(errors, whole: str, deepest: bool) -> str | None:
    """Validation errors as one line: where, then why; None when there are none.

    The first error is the deepest (``deepest``) or the shallowest; inside alternatives
    (oneOf, anyOf) the branch that went deepest is reported.
    """
    errors = list(errors)
    if not errors:
        return None
    depth = lambda e: len(list(e.absolute_path))  # noqa: E731
    best = min(errors, key=lambda e: (-depth(e) if deepest else depth(e), e.message))
    for err in errors:
        for sub in err.context or ():
            if depth(sub) > depth(best):
                best = sub
    where = "/".join(str(p) for p in best.absolute_path) or whole
    return f"{where}: {' '.join(best.message.split())[:160]}"


__all__ = ["DIALECT", "LANGUAGE_ID", "language_schema", "term_problem", "one_line", "with_language_inside"]
