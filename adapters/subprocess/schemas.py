"""JSON Schemas of the adapter protocol, one file per message, and their validation.

The files in ``adapters/subprocess/schemas/`` are what a server author reads and
what the kit validates every answer against.  They are written by
``python -m adapters.subprocess.schemas`` from the definitions below (the
operation language's schema is derived from its classes); a test keeps the
files equal to what this module generates.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from adapters.base import DEPENDENCY_KINDS, LACKABLE
from reference_model import language as L
from reference_model import mqconst as C
from reference_model.language_schema import DIALECT, LANGUAGE_ID, language_schema, one_line, with_language_inside
from reference_model.rules import AREAS

if TYPE_CHECKING:   # the validators are imported where first used: a run that validates nothing starts sooner
    from jsonschema import Draft7Validator
    from referencing import Registry

#: The protocol version this kit speaks.
PROTOCOL = 1
SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"
BASE = "urn:mqconform:protocol:1:"
assert LANGUAGE_ID == BASE + "language"

#: Methods the kit calls, in the order of a session.
METHODS = ("hello", "start_case", "execute", "elapsed", "end_case", "shutdown")


# ---------------------------------------------------------------- the operation language
# Its schema is the language's own (reference_model.language_schema); the messages below refer to it by $id.

# ---------------------------------------------------------------- the messages

def _request(method: str, params: dict | None, description: str) -> dict:
    props = {"id": {"type": "integer", "minimum": 1}, "method": {"const": method}}
    required = ["id", "method"]
    if params is not None:
        props["params"] = params
        required.append("params")
    return {"$schema": DIALECT, "$id": BASE + f"{method}.request", "title": f"{method} (kit to server)",
            "description": description, "type": "object", "properties": props, "required": required,
            "additionalProperties": False}


def _response(method: str, result: dict, description: str) -> dict:
    return {"$schema": DIALECT, "$id": BASE + f"{method}.response", "title": f"answer to {method} (server to kit)",
            "description": description, "type": "object",
            "oneOf": [
                {"properties": {"id": {"type": "integer"}, "result": result}, "required": ["id", "result"],
                 "additionalProperties": False},
                {"$ref": BASE + "error"},
            ]}


def _object(props: dict, required=(), extra: bool = False) -> dict:
    return {"type": "object", "properties": props, "required": list(required), "additionalProperties": extra}


EMPTY = _object({})


def message_schemas() -> dict[str, dict]:
    caps = _object({
        "areas": {"type": "array", "items": {"enum": list(AREAS)}, "uniqueItems": True},
        "platforms": {"type": "array", "items": {"enum": list(C.PLATFORMS)}, "minItems": 1, "uniqueItems": True},
        "operations": {"anyOf": [{"type": "null"}, {"type": "array", "items": {
            "enum": sorted(c.__name__ for c in L.OPERATIONS)}, "uniqueItems": True}]},
        "realtime": {"type": "boolean"},
        # the server takes execute requests of different connections at once (mqconform run --concurrency): it
        # may read the next request before it has answered one, and answer them in any order, each answer
        # with its request's id; every other request comes only when no execute is in flight
        "concurrent": {"type": "boolean"},
        "expiry_tolerance": {"type": "integer", "minimum": 0},
        "not_applicable": {"type": "object", "additionalProperties": {"type": "string"}},
        "lacks": {"type": "array", "items": {"enum": sorted(LACKABLE)}, "uniqueItems": True},
        "depends_on": {"type": "array", "items": _object({
            "kind": {"enum": list(DEPENDENCY_KINDS)}, "what": {"type": "string", "minLength": 1},
            "why": {"type": "string"}, "needed": {"type": "boolean"},
            "rules": {"type": "array", "items": {"type": "string", "pattern": "^[A-Z]+-[0-9]{2,3}[a-z]?$"},
                      "minItems": 1, "uniqueItems": True}}, required=["kind", "what", "rules"])},
    }, required=["areas"])
    out = {
        "error": {"$schema": DIALECT, "$id": BASE + "error", "title": "a server's own failure (server to kit)",
                  "description": "Something went wrong in the server itself, not in the queue manager it "
                                 "serves: the run ends with an error verdict. An MQ reason code is an "
                                 "observation, never an error.",
                  **_object({"id": {"type": ["integer", "null"]},
                             "error": _object({"message": {"type": "string"}}, required=["message"], extra=True)},
                            required=["id", "error"])},
        "hello.request": _request("hello", _object({"protocol": {"const": PROTOCOL}, "kit": {"type": "string"}},
                                                   required=["protocol", "kit"]),
                                  "The first message: the protocol version the kit speaks and the kit's version."),
        "hello.response": _response("hello", _object({
            "protocol": {"type": "integer"},
            "server": _object({"name": {"type": "string", "minLength": 1}, "version": {"type": "string"}},
                              required=["name", "version"], extra=True),
            "capabilities": caps,
        }, required=["protocol", "server", "capabilities"]),
            "The server's protocol version (must equal the kit's), its name and version (any further "
            "fields describe the system and go into the report), and what it can express."),
        "start_case.request": _request("start_case", _object(
            {"case": {"type": "string"}, "platform": {"enum": list(C.PLATFORMS)},
             # sent (true) only to a server that declared concurrent, for a case whose executes come at once
             "concurrent": {"type": "boolean"}}, required=["case", "platform"]),
            "Begin an isolated test case: nothing from an earlier case may be visible in it. concurrent (sent "
            "only to a server that declared it, true when given): this case's executes may come several at "
            "once; without it each execute comes only once the one before it is answered."),
        "start_case.response": _response("start_case", EMPTY, "The case has started."),
        "execute.request": _request("execute", _object({"op": {"$ref": BASE + "language#/$defs/Op"}},
                                                       required=["op"]),
                                    "Run one operation of the language."),
        "execute.response": _response("execute", {
            "type": "object", "if": {"required": ["not_expressible"]},
            "then": _object({"not_expressible": {"type": "string", "minLength": 1}}, required=["not_expressible"]),
            "else": _object({"observation": {"$ref": BASE + "language#/$defs/Observation"}},
                            required=["observation"])},
            "What the queue manager answered, reason codes included; or, for an operation (or an option or "
            "value of it) the system cannot express, not_expressible with the reason: nothing was done, and "
            "the kit leaves the step out (an MQ reason code such as MQRC_FUNCTION_NOT_SUPPORTED is an answer, "
            "judged as such)."),
        "elapsed.request": _request("elapsed", None,
                                    "Real-time servers only: how much time the case has taken so far."),
        "elapsed.response": _response("elapsed", _object({"tenths": {"type": "integer", "minimum": 0}},
                                                         required=["tenths"]),
                                      "Tenths of a second since start_case."),
        "end_case.request": _request("end_case", None, "End the current case; its queues may be deleted."),
        "end_case.response": _response("end_case", EMPTY, "The case has ended."),
        "shutdown.request": _request("shutdown", None, "The last message: answer, then exit with status 0."),
        "shutdown.response": _response("shutdown", EMPTY, "The server is about to exit."),
        "language": language_schema(),
    }
    return out


# ---------------------------------------------------------------- validation

@lru_cache(maxsize=1)
def _registry() -> tuple[Registry, dict[str, dict]]:
    from referencing import Registry, Resource

    schemas = {}
    for path in sorted(SCHEMA_DIR.glob("*.json")):
        schemas[path.name.removesuffix(".json")] = json.loads(path.read_text(encoding="utf-8"))
    registry = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in schemas.values())
    return registry, schemas


@lru_cache(maxsize=None)
def validator(name: str) -> Draft7Validator:
    """The precise validator of message ``name``, resolving references between the schema files."""
    from jsonschema import Draft7Validator

    registry, schemas = _registry()
    return Draft7Validator(schemas[name], registry=registry)


def _bundled(name: str) -> dict:
    """Message ``name``'s schema made self-contained: references to other files point inside it."""
    _, schemas = _registry()
    error = {k: v for k, v in schemas["error"].items() if k not in ("$id", "$schema")}

    def local(node):
        if isinstance(node, dict):
            if node.get("$ref") == BASE + "error":
                return local(error)
            return {k: local(v) for k, v in node.items()}
        if isinstance(node, list):
            return [local(v) for v in node]
        return node

    return with_language_inside(local({k: v for k, v in schemas[name].items() if k != "$id"}))


@lru_cache(maxsize=None)
def _valid(name: str) -> Callable[[dict], bool]:
    """A compiled check of message ``name``, whether a message is valid (fast; its error texts are vague, so a
    message it refuses is checked again by :func:`validator`)."""
    import fastjsonschema

    check = fastjsonschema.compile(_bundled(name))

    def valid(message: dict) -> bool:
        try:
            check(message)
        except fastjsonschema.JsonSchemaException:
            return False
        return True

    return valid


def problem(name: str, message: dict) -> str | None:
    """Why ``message`` is not a valid ``name`` message (the deepest error, one line), or None."""
    if _valid(name)(message):
        return None
    return one_line(validator(name).iter_errors(message), "the message", deepest=True)


def write(directory: Path = SCHEMA_DIR) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, schema in message_schemas().items():
        path = directory / f"{name}.json"
        path.write_text(json.dumps(schema, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(path)
    return written



if __name__ == "__main__":
    write()
