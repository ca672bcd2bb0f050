"""The config base both programs and the readers build on: a section of a TOML file as
a frozen, strict pydantic model (`Section`), errors raised by checks that span keys
(`Problem`), and pydantic's errors turned into the project's messages (`describe`):
`[reader] baudrate: must be positive, e.g. 9600; got 0`.
"""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, get_args

from pydantic import BaseModel, ConfigDict, ValidationError


class ConfigError(ValueError):
    """The config cannot be used; the message names the file, the key and what is allowed."""


def read_toml(path: str | Path) -> dict[str, Any]:
    """A config file's TOML, or a ConfigError that names the file and what is wrong."""
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except PermissionError:
        from station.shared.readable import why_unreadable

        raise ConfigError(f"cannot read the config {path}: {why_unreadable(path)}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read the config {path}: {exc.strerror}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc


class Problem(ValueError):
    """Raised by a check that spans several keys: `key` is the one the message is about
    (a path such as `("tokens", 1, "name")` for a key inside a list)."""

    def __init__(self, key: str | tuple[str | int, ...], message: str) -> None:
        super().__init__(message)
        self.key = key if isinstance(key, tuple) else (key,)


class Section(BaseModel):
    """A table of the config file: frozen, strict, every key known."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    #: Keys that are tables of their own in the file (`[reader.camera]`): messages name
    #: them as such.
    SUB_TABLES: ClassVar[tuple[str, ...]] = ()
    #: Keys that are gone, and what to write instead.
    RETIRED_KEYS: ClassVar[dict[str, str]] = {}


def bounds(unit: str = "", say: str = "") -> dict[str, Any]:
    """`json_schema_extra` for a bounded number: the unit (`second`) and how the message
    puts it (`expected a number`: "expected a number from 0 to 1" instead of "must be
    at least 0 and at most 1")."""
    return {"unit": unit, "say": say}


def one_of(value: Any, allowed: Sequence[Any]) -> Any:
    """`value` if it is allowed, else the error that lists the choices."""
    if value not in allowed:
        choices = ", ".join(f"{a:g}" if isinstance(a, float) else str(a) for a in allowed)
        raise ValueError(f"{value!r} is not allowed; choose one of {choices}")
    return value


# --- pydantic's errors in the project's words --------------------------------------------


def describe(
    error: ValidationError, root: type[BaseModel], prefix: tuple[str, ...] = (), source: str = ""
) -> str:
    """Every problem of `error` (raised validating `root`, found at `prefix` in the file),
    one a line, first first: `SOURCE: [reader] baudrate: must be positive, e.g. 9600; got 0`."""
    lines = []
    for problem in error.errors(include_url=False):
        loc = (*prefix, *problem["loc"])
        cause = (problem.get("ctx") or {}).get("error")
        if isinstance(cause, Problem):
            loc = (*loc, *cause.key)
        model, field = _walk(root, prefix, loc)
        message = _message(problem, model, field, loc, _sub_tables(root, prefix, loc))
        lines.append(f"{source}: {message}" if source else message)
    return "\n".join(lines)


def where(loc: Sequence[str | int], sub_tables: Sequence[str] = ()) -> str:
    """How a key is named in messages, as the TOML file writes it: `[reader] baudrate`,
    `[reader.camera] roi` (`sub_tables`: the keys of `loc[0]`'s table that are tables of
    their own), `[table]`, `[table] decks`, `[api] tokens[0].role`."""
    parts = list(loc)
    if not parts:
        return "config"
    table = str(parts[0])
    if len(parts) > 1 and parts[1] in sub_tables:
        table, parts = f"reader.{parts[1]}", parts[1:]
    key = _dotted(parts[1:])
    return f"[{table}] {key}" if key else f"[{table}]"


def _dotted(parts: Sequence[str | int]) -> str:
    text = ""
    for p in parts:
        text += f"[{p}]" if isinstance(p, int) else (f".{p}" if text else str(p))
    return text


def _sub_tables(
    root: type[BaseModel], prefix: tuple[str, ...], loc: Sequence[str | int]
) -> tuple[str, ...]:
    """The sub-tables of the table `loc` is in (`root` itself when `prefix` names it)."""
    if prefix:
        model: Any = root
    else:
        field = root.model_fields.get(str(loc[0])) if loc else None
        inner = _models_in(field.annotation) if field is not None else []
        model = inner[0] if inner else None
    return tuple(getattr(model, "SUB_TABLES", ()))


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in get_args(annotation) for m in _models_in(arg)]


def _walk(
    root: type[BaseModel], prefix: tuple[str, ...], loc: Sequence[str | int]
) -> tuple[type[BaseModel] | None, Any]:
    """The model that holds the key at `loc`, and that key's FieldInfo (None if the key is
    unknown, or `loc` names a whole table)."""
    model: type[BaseModel] = root
    field = None
    parts = loc[len(prefix) :]
    for i, part in enumerate(parts):
        if isinstance(part, int):
            continue
        field = model.model_fields.get(part)
        if field is None:
            return model, None
        inner = _models_in(field.annotation)
        if inner and any(isinstance(p, str) for p in parts[i + 1 :]):
            model, field = inner[0], None
    return model, field


def _keys(model: type[BaseModel] | None, table: str = "") -> str:
    if model is None:
        return ""
    names = []
    subs = getattr(model, "SUB_TABLES", ())
    for name, field in model.model_fields.items():
        if name in subs:
            names.append(f"[{table}.{name}]")
        elif not field.exclude:
            names.append(name)
    return ", ".join(names)


def _number(value: float) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _range(field: Any, kind: str) -> str:
    """`more than 0 seconds and at most 60 seconds`, or (`say` = expected) `from 0 to 1`."""
    extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
    unit, say = str(extra.get("unit", "")), str(extra.get("say", ""))
    low = high = None
    for m in field.metadata:
        for attr, word in (("ge", "at least"), ("gt", "more than")):
            if getattr(m, attr, None) is not None:
                low = (word, getattr(m, attr))
        if getattr(m, "le", None) is not None:
            high = ("at most", m.le)

    def put(word: str, value: float) -> str:
        suffix = f" {unit}{'' if value == 1 else 's'}" if unit else ""
        return f"{word} {_number(value)}{suffix}"

    if say:
        if low and high and low[0] == "at least":
            return f"expected {kind} from {_number(low[1])} to {_number(high[1])}"
        return f"expected {kind} of " + " and ".join(put(*b) for b in (low, high) if b)
    return "must be " + " and ".join(put(*b) for b in (low, high) if b)


def _message(
    error: Any,
    model: type[BaseModel] | None,
    field: Any,
    loc: Sequence[str | int],
    sub_tables: Sequence[str] = (),
) -> str:
    kind, value = error["type"], error.get("input")
    here = where(loc, sub_tables)
    got = f", got {value!r}"
    if kind == "extra_forbidden":
        if len(loc) == 1:  # a key at the top of the file
            return f"unknown section [{loc[0]}] (known: {_keys(model)})"
        retired = getattr(model, "RETIRED_KEYS", {})
        if loc and loc[-1] in retired:
            return f"{where(loc, sub_tables)}: {retired[str(loc[-1])]}"
        return f"{where(loc, sub_tables)}: unknown key; the keys are {_keys(model, str(loc[0]))}"
    if kind == "value_error":
        return f"{here}: {error['ctx']['error']}"
    if kind == "missing":
        extra = field.json_schema_extra if field is not None else None
        hint = extra.get("required") if isinstance(extra, dict) else None
        return f"{here}: required" + (f": {hint}" if hint else "")
    words = {
        "int_type": "expected a whole number",
        "float_type": "expected a number",
        "bool_type": "expected true or false",
        "string_type": "expected a string",
        "path_type": "expected a path string",
        "tuple_type": "expected a list",
        "list_type": "expected a list",
    }
    if kind in words:
        return f"{here}: {words[kind]}{got}"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        if len(loc) > 1 and loc[-2] == "tokens":
            return f"{here}: expected a table like {{name = ..., role = ...}}{got}"
        return f"{here}: expected a table of keys, got {type(value).__name__}"
    if kind in ("greater_than", "greater_than_equal", "less_than_equal") and field is not None:
        number = (
            "a whole number"
            if int in (field.annotation, *get_args(field.annotation))
            else "a number"
        )
        return f"{here}: {_range(field, number)}{got}"
    return f"{here}: {error['msg']}{got}"
