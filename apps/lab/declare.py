"""What a paper app declares: its Paper, its Experiments, their typed Parameters and Panels.

This module is the small public surface paper apps import (``from apps.lab.declare import …``).
It has no Django imports so declarations can be checked and run from plain pytest.

A paper app ``apps/<slug>/experiments.py`` defines::

    PAPER = Paper(slug="toptwo_bai", title="…", abstract="…", arxiv="2610.01951", authors=[…], tags=[…])
    EXPERIMENTS = [
        Experiment(
            slug="stopping_time", title="τ versus log(1/δ)", description="first line is the summary…",
            compute="compute.toptwo_bai.run:stopping_time",         # fn(params: dict, reporter) -> dict
            params=[Float("delta", 0.01, min=1e-10, max=0.2, log=True, label="δ", help="…"), …],
            presets={"smoke": {"n_runs": 20}, "paper headline": {…}},
            panels=[Line("Stopping statistic", keys=["stat/Z", "stat/threshold"], x_log=True), Table("summary")],
            gpu=False, cost_seconds=60,
        ),
    ]

From that the lab core derives the form, the API validation and JSON Schema, the catalog rows,
the admin entries, the Celery execution and the dashboard.  The compute function receives the
validated params plus ``seed`` (int) and ``device`` ("cpu"/"cuda").
"""

from __future__ import annotations

import importlib
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

SLUG_RE = re.compile(r"^[a-z][a-z0-9_]*$")
KEY_RE = re.compile(r"^[A-Za-z0-9_.\-/*\[\]]+$")
RESERVED = {"seed", "device"}


class DeclarationError(TypeError):
    """A declaration is malformed (raised at import/registration, i.e. at ``manage.py check``)."""


class ValidationError(ValueError):
    """Bad parameters.  ``errors`` maps field name → message naming the bound that was broken."""

    def __init__(self, errors: dict[str, str]) -> None:
        self.errors = dict(errors)
        super().__init__("; ".join(f"{k}: {v}" for k, v in self.errors.items()))


# ------------------------------------------------------------------------------------------------
# Parameters
# ------------------------------------------------------------------------------------------------
@dataclass
class Param:
    """Base of every typed parameter: one source of truth for form, API schema and task check."""

    name: str
    default: Any
    label: str = ""
    help: str = ""
    group: str = ""  # optional form section ("Sampling", "Stopping", …)

    kind = "param"

    def __post_init__(self) -> None:
        if not SLUG_RE.match(self.name) or self.name in RESERVED:
            raise DeclarationError(f"bad parameter name {self.name!r}")
        if not self.label:
            self.label = self.name.replace("_", " ")
        # the default must be valid: fail at registration, not during a user's run
        try:
            self.default = self.clean(self.default)
        except ValueError as exc:
            raise DeclarationError(f"parameter {self.name!r}: default is invalid: {exc}") from exc

    def clean(self, value: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def json_schema(self) -> dict[str, Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        """A JSON description for the API / UI."""
        d = {"name": self.name, "kind": self.kind, "label": self.label, "help": self.help, "default": self.default}
        if self.group:
            d["group"] = self.group
        d["schema"] = self.json_schema()
        return d


def _bounds_msg(lo: Any, hi: Any) -> str:
    if lo is not None and hi is not None:
        return f"between {lo} and {hi}"
    if lo is not None:
        return f"at least {lo}"
    return f"at most {hi}"


@dataclass
class Int(Param):
    min: int | None = None
    max: int | None = None
    log: bool = False  # hint for sweeps / UI: sample on a log scale
    kind = "int"

    def clean(self, value: Any) -> int:
        if isinstance(value, bool):
            raise ValueError("must be an integer, not a boolean")
        if isinstance(value, float):
            if not value.is_integer():
                raise ValueError(f"must be an integer (got {value})")
            value = int(value)
        if isinstance(value, str):
            try:
                value = int(value.strip())
            except ValueError:
                raise ValueError(f"must be an integer (got {value!r})") from None
        if not isinstance(value, int):
            raise ValueError(f"must be an integer (got {type(value).__name__})")
        if (self.min is not None and value < self.min) or (self.max is not None and value > self.max):
            raise ValueError(f"must be {_bounds_msg(self.min, self.max)} (got {value})")
        return value

    def json_schema(self) -> dict[str, Any]:
        s: dict[str, Any] = {"type": "integer", "default": self.default, "description": self.help or self.label}
        if self.min is not None:
            s["minimum"] = self.min
        if self.max is not None:
            s["maximum"] = self.max
        return s


@dataclass
class Float(Param):
    min: float | None = None
    max: float | None = None
    log: bool = False
    kind = "float"

    def clean(self, value: Any) -> float:
        if isinstance(value, bool):
            raise ValueError("must be a number, not a boolean")
        if isinstance(value, str):
            try:
                value = float(value.strip())
            except ValueError:
                raise ValueError(f"must be a number (got {value!r})") from None
        if not isinstance(value, (int, float)):
            raise ValueError(f"must be a number (got {type(value).__name__})")
        value = float(value)
        if not math.isfinite(value):
            raise ValueError("must be a finite number")
        if (self.min is not None and value < self.min) or (self.max is not None and value > self.max):
            raise ValueError(f"must be {_bounds_msg(self.min, self.max)} (got {value:g})")
        return value

    def json_schema(self) -> dict[str, Any]:
        s: dict[str, Any] = {"type": "number", "default": self.default, "description": self.help or self.label}
        if self.min is not None:
            s["minimum"] = self.min
        if self.max is not None:
            s["maximum"] = self.max
        return s


@dataclass
class Bool(Param):
    kind = "bool"

    def clean(self, value: Any) -> bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in {
            "true",
            "1",
            "yes",
            "on",
            "false",
            "0",
            "no",
            "off",
            "",
        }:
            return value.strip().lower() in {"true", "1", "yes", "on"}
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        raise ValueError(f"must be true or false (got {value!r})")

    def json_schema(self) -> dict[str, Any]:
        return {"type": "boolean", "default": self.default, "description": self.help or self.label}


@dataclass
class Choice(Param):
    """One of ``choices``: a list of values, or of (value, label) pairs."""

    choices: list[Any] = field(default_factory=list)
    kind = "choice"

    def __post_init__(self) -> None:
        if not self.choices:
            raise DeclarationError(f"choice parameter {self.name!r} has no choices")
        self.choices = [tuple(c) if isinstance(c, (list, tuple)) else (c, str(c)) for c in self.choices]
        super().__post_init__()

    @property
    def values(self) -> list[Any]:
        return [c[0] for c in self.choices]

    def clean(self, value: Any) -> Any:
        for v in self.values:
            if value == v or (isinstance(value, str) and str(v) == value):
                return v
        raise ValueError(f"must be one of {', '.join(map(str, self.values))} (got {value!r})")

    def json_schema(self) -> dict[str, Any]:
        return {"enum": self.values, "default": self.default, "description": self.help or self.label}

    def describe(self) -> dict[str, Any]:
        d = super().describe()
        d["choices"] = [{"value": v, "label": lab} for v, lab in self.choices]
        return d


@dataclass
class Str(Param):
    max_length: int = 200
    pattern: str = ""
    kind = "str"

    def clean(self, value: Any) -> str:
        if not isinstance(value, str):
            raise ValueError(f"must be a string (got {type(value).__name__})")
        if len(value) > self.max_length:
            raise ValueError(f"must be at most {self.max_length} characters (got {len(value)})")
        if self.pattern and not re.fullmatch(self.pattern, value):
            raise ValueError(f"must match {self.pattern!r}")
        return value

    def json_schema(self) -> dict[str, Any]:
        s: dict[str, Any] = {"type": "string", "maxLength": self.max_length, "default": self.default}
        if self.pattern:
            s["pattern"] = self.pattern
        s["description"] = self.help or self.label
        return s


@dataclass
class FloatList(Param):
    """A list of numbers, each within [min, max], with min_len..max_len items.  Forms take "0.5, 0.4"."""

    min: float | None = None
    max: float | None = None
    min_len: int = 1
    max_len: int = 100
    kind = "float_list"
    _item_type = "number"

    def _item(self, v: Any) -> Any:
        if isinstance(v, bool):
            raise ValueError("items must be numbers")
        v = float(v)
        if not math.isfinite(v):
            raise ValueError("items must be finite")
        return v

    def clean(self, value: Any) -> list[Any]:
        if isinstance(value, str):
            value = [p for p in re.split(r"[,\s;]+", value.strip().strip("[]()")) if p]
        if not isinstance(value, (list, tuple)):
            raise ValueError(f"must be a list (got {type(value).__name__})")
        out = []
        for i, v in enumerate(value):
            try:
                x = self._item(v)
            except (TypeError, ValueError):
                raise ValueError(f"item {i + 1} ({v!r}) is not a valid {self._item_type}") from None
            if (self.min is not None and x < self.min) or (self.max is not None and x > self.max):
                raise ValueError(f"item {i + 1} must be {_bounds_msg(self.min, self.max)} (got {x:g})")
            out.append(x)
        if not (self.min_len <= len(out) <= self.max_len):
            raise ValueError(f"must have between {self.min_len} and {self.max_len} items (got {len(out)})")
        return out

    def json_schema(self) -> dict[str, Any]:
        item: dict[str, Any] = {"type": self._item_type}
        if self.min is not None:
            item["minimum"] = self.min
        if self.max is not None:
            item["maximum"] = self.max
        return {
            "type": "array",
            "items": item,
            "minItems": self.min_len,
            "maxItems": self.max_len,
            "default": self.default,
            "description": self.help or self.label,
        }


@dataclass
class IntList(FloatList):
    kind = "int_list"
    _item_type = "integer"

    def _item(self, v: Any) -> Any:
        if isinstance(v, bool):
            raise ValueError("items must be integers")
        if isinstance(v, str):
            v = v.strip()
        f = float(v)
        if not f.is_integer():
            raise ValueError("items must be integers")
        return int(f)


# ------------------------------------------------------------------------------------------------
# Panels: what the dashboard draws from what the compute reports
# ------------------------------------------------------------------------------------------------
@dataclass
class Panel:
    title: str
    help: str = ""
    width: int = 6  # of 12 grid columns
    kind = "panel"

    def describe(self) -> dict[str, Any]:
        d = {k: v for k, v in self.__dict__.items() if not k.startswith("_")}
        d["kind"] = self.kind
        return d


@dataclass
class Line(Panel):
    """Series over steps.  ``keys`` are series keys; a key ending in ``*`` matches every key with that prefix."""

    keys: list[str] = field(default_factory=list)
    x_label: str = "step"
    y_label: str = ""
    x_log: bool = False
    y_log: bool = False
    mode: str = "lines"  # "lines", "markers" or "lines+markers"
    kind = "line"

    def __post_init__(self) -> None:
        if not self.keys:
            raise DeclarationError(f"panel {self.title!r} names no series keys")
        for k in self.keys:
            if not KEY_RE.match(k):
                raise DeclarationError(f"panel {self.title!r}: bad series key {k!r}")


@dataclass
class Scatter(Line):
    """Series drawn as points (x = step)."""

    mode: str = "markers"
    kind = "line"


@dataclass
class Histogram(Panel):
    """Histogram of the values of one or more series (e.g. stopping times as runs finish)."""

    keys: list[str] = field(default_factory=list)
    x_label: str = ""
    nbins: int = 40
    kind = "histogram"

    def __post_init__(self) -> None:
        if not self.keys:
            raise DeclarationError(f"panel {self.title!r} names no series keys")


@dataclass
class Table(Panel):
    """A table the compute reported with ``reporter.table(key, rows)``."""

    key: str = ""
    width: int = 12
    kind = "table"

    def __post_init__(self) -> None:
        if not self.key:
            self.key = self.title


@dataclass
class Bar(Panel):
    """Bars from a reported table: x column vs one or more y columns."""

    table: str = ""
    x: str = ""
    y: list[str] = field(default_factory=list)
    y_log: bool = False
    kind = "bar"

    def __post_init__(self) -> None:
        if not (self.table and self.x and self.y):
            raise DeclarationError(f"bar panel {self.title!r} needs table, x and y")


@dataclass
class Figure(Panel):
    """A Plotly figure the compute reported with ``reporter.figure(key, {...})`` (heatmaps, ECDFs, box plots…)."""

    key: str = ""
    kind = "figure"

    def __post_init__(self) -> None:
        if not self.key:
            raise DeclarationError(f"figure panel {self.title!r} needs key")


# ------------------------------------------------------------------------------------------------
# Paper and Experiment
# ------------------------------------------------------------------------------------------------
@dataclass
class Paper:
    slug: str
    title: str
    abstract: str = ""
    arxiv: str = ""
    authors: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    venue: str = "NeurIPS 2026"
    notes: str = ""  # page text: what is implemented, design choices (Markdown-ish plain text)

    def __post_init__(self) -> None:
        if not SLUG_RE.match(self.slug):
            raise DeclarationError(f"bad paper slug {self.slug!r}")


@dataclass
class Experiment:
    slug: str
    title: str
    compute: str  # "package.module:function" taking (params: dict, reporter) -> dict
    params: list[Param] = field(default_factory=list)
    description: str = ""
    presets: dict[str, dict[str, Any]] = field(default_factory=dict)
    panels: list[Panel] = field(default_factory=list)
    gpu: bool = False  # wants a GPU: routed to the gpu queue when one is configured
    threads: int = 1  # torch/BLAS threads for this run
    cost_seconds: int = 60  # rough estimate on 2 CPU cores for the defaults
    soft_time_limit: int = 1800
    time_limit: int = 2100
    check: Callable[[dict[str, Any]], dict[str, str] | None] | None = None  # cross-field validation
    paper: Paper | None = None  # filled at registration

    def __post_init__(self) -> None:
        if not SLUG_RE.match(self.slug):
            raise DeclarationError(f"bad experiment slug {self.slug!r}")
        if ":" not in self.compute:
            raise DeclarationError(f"experiment {self.slug!r}: compute must be 'module:function'")
        names = [p.name for p in self.params]
        if len(set(names)) != len(names):
            raise DeclarationError(f"experiment {self.slug!r}: duplicate parameter names")
        if self.soft_time_limit >= self.time_limit:
            raise DeclarationError(f"experiment {self.slug!r}: soft_time_limit must be below time_limit")
        for pname, preset in self.presets.items():
            unknown = set(preset) - set(names) - {"seed"}
            if unknown:
                raise DeclarationError(
                    f"experiment {self.slug!r}, preset {pname!r}: unknown parameters {sorted(unknown)}"
                )
            try:
                self.validate(preset)
            except ValidationError as exc:
                raise DeclarationError(f"experiment {self.slug!r}, preset {pname!r}: {exc}") from exc
        try:
            self.validate({})
        except ValidationError as exc:
            raise DeclarationError(f"experiment {self.slug!r}: defaults fail the cross-field check: {exc}") from exc

    @property
    def id(self) -> str:
        return f"{self.paper.slug}/{self.slug}" if self.paper else self.slug

    @property
    def summary(self) -> str:
        return (self.description or self.title).strip().splitlines()[0] if (self.description or self.title) else ""

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    def validate(self, data: dict[str, Any], partial_ok: bool = True) -> dict[str, Any]:
        """Return the full, cleaned parameter dict (defaults filled in) or raise ValidationError.

        Unknown keys are rejected.  ``seed``/``device`` are not parameters (they are run fields).
        """
        if not isinstance(data, dict):
            raise ValidationError({"config": "must be an object of parameter values"})
        errors: dict[str, str] = {}
        known = {p.name for p in self.params}
        for k in data:
            if k not in known and k != "seed":
                errors[str(k)] = "unknown parameter"
        out: dict[str, Any] = {}
        for p in self.params:
            if p.name in data and data[p.name] is not None:
                try:
                    out[p.name] = p.clean(data[p.name])
                except (ValueError, TypeError) as exc:
                    errors[p.name] = str(exc)
            elif partial_ok:
                out[p.name] = p.default
            else:
                errors[p.name] = "is required"
        if not errors and self.check is not None:
            extra = self.check(dict(out)) or {}
            errors.update(extra)
        if errors:
            raise ValidationError(errors)
        return out

    def json_schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "title": self.title,
            "description": self.summary,
            "properties": {p.name: p.json_schema() for p in self.params},
            "additionalProperties": False,
        }

    def describe(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "slug": self.slug,
            "title": self.title,
            "description": self.description,
            "params": [p.describe() for p in self.params],
            "schema": self.json_schema(),
            "presets": self.presets,
            "panels": [p.describe() for p in self.panels],
            "gpu": self.gpu,
            "threads": self.threads,
            "cost_seconds": self.cost_seconds,
        }

    def load(self) -> Callable[..., dict[str, Any]]:
        module, _, func = self.compute.partition(":")
        return getattr(importlib.import_module(module), func)

    def run_local(self, params: dict[str, Any], reporter: Any, seed: int = 0, device: str = "cpu") -> dict[str, Any]:
        """Validate and run in-process (tests, notebooks).  The lab's runner does the same plus bookkeeping."""
        clean = self.validate(params)
        clean["seed"] = int(params.get("seed", seed))
        clean["device"] = device
        return self.load()(clean, reporter) or {}


def _matches(pattern: str, key: str) -> bool:
    return key.startswith(pattern[:-1]) if pattern.endswith("*") else key == pattern


def missing_panel_data(experiment: Experiment, reporter: Any) -> list[str]:
    """Panels whose data a finished run (a MemoryReporter) never reported; [] when every panel has data.

    Use it in app tests: run the smoke preset with ``run_local`` and assert this is empty.
    """
    missing = []
    series = set(getattr(reporter, "points", {}))
    tables = set(getattr(reporter, "tables", {}))
    figures = set(getattr(reporter, "figures", {}))
    for panel in experiment.panels:
        if isinstance(panel, (Line, Histogram)):
            for pattern in panel.keys:
                if not any(_matches(pattern, k) for k in series):
                    missing.append(f"{panel.title}: series {pattern}")
        elif isinstance(panel, Table) and panel.key not in tables:
            missing.append(f"{panel.title}: table {panel.key}")
        elif isinstance(panel, Bar) and panel.table not in tables:
            missing.append(f"{panel.title}: table {panel.table}")
        elif isinstance(panel, Figure) and panel.key not in figures:
            missing.append(f"{panel.title}: figure {panel.key}")
    return missing
