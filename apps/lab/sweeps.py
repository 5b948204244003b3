"""Sweeps: turn parameters into lists, ranges or random draws within their declared bounds.

Text syntax (one swept parameter per line; the form and the API's ``axes_text`` accept it):

    delta = 0.1, 0.01, 0.001          # a list
    n_runs = range(100, 501, 100)     # integers, stop excluded
    beta = linspace(0.2, 0.8, 4)      # evenly spaced
    delta = logspace(1e-8, 1e-1, 8)   # evenly spaced in log
    beta = random(5)                  # 5 draws within the declared bounds (log-uniform if declared log)
    seed = 0, 1, 2                    # seeds are a valid axis too

Several lines make a grid (cartesian product); ``random(n)`` lines are drawn jointly, n configs.
"""

from __future__ import annotations

import itertools
import math
import random
import re
from typing import Any

from django.conf import settings
from django.db import transaction

from . import declare as d
from .models import Experiment, Run, RunStatus, Sweep

LINE_RE = re.compile(r"^\s*([a-z][a-z0-9_]*)\s*=\s*(.+?)\s*$")
FUNC_RE = re.compile(r"^(range|linspace|logspace|random)\((.*)\)$")


def _num(text: str) -> float:
    return float(text.strip())


def parse_axes(decl: d.Experiment, text: str) -> tuple[dict[str, list[Any]], dict[str, int]]:
    """Parse the sweep text into grid axes {param: [raw values]} and random axes {param: n}."""
    grid: dict[str, list[Any]] = {}
    rand: dict[str, int] = {}
    names = {p.name for p in decl.params} | {"seed"}
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        m = LINE_RE.match(line)
        if not m:
            raise d.ValidationError({"axes": f"line {lineno}: expected 'name = values'"})
        name, rhs = m.groups()
        if name not in names:
            raise d.ValidationError({"axes": f"line {lineno}: unknown parameter {name!r}"})
        f = FUNC_RE.match(rhs)
        try:
            if f is None:
                values: list[Any] = [v.strip() for v in rhs.split(",") if v.strip()]
                param = decl.param(name) if name != "seed" else None
                if isinstance(param, d.FloatList):  # list-valued parameter: values separated by ';'
                    values = [v.strip() for v in rhs.split(";") if v.strip()]
                grid[name] = values
            else:
                fn, args_text = f.groups()
                args = [a for a in args_text.split(",") if a.strip()]
                if fn == "random":
                    rand[name] = int(_num(args[0]))
                elif fn == "range":
                    ints = [int(_num(a)) for a in args]
                    grid[name] = list(range(*ints))
                elif fn == "linspace":
                    lo, hi, n = _num(args[0]), _num(args[1]), int(_num(args[2]))
                    grid[name] = [lo + (hi - lo) * i / max(1, n - 1) for i in range(n)]
                elif fn == "logspace":
                    lo, hi, n = math.log10(_num(args[0])), math.log10(_num(args[1])), int(_num(args[2]))
                    grid[name] = [10 ** (lo + (hi - lo) * i / max(1, n - 1)) for i in range(n)]
        except (ValueError, IndexError, TypeError) as exc:
            raise d.ValidationError({"axes": f"line {lineno}: {exc}"}) from None
        if name in grid and not grid[name]:
            raise d.ValidationError({"axes": f"line {lineno}: no values"})
    if not grid and not rand:
        raise d.ValidationError({"axes": "name at least one parameter to sweep"})
    if len(set(rand.values())) > 1:
        raise d.ValidationError({"axes": "all random(n) lines must use the same n"})
    return grid, rand


def _draw(param: d.Param, rng: random.Random) -> Any:
    if isinstance(param, d.Bool):
        return rng.random() < 0.5
    if isinstance(param, d.Choice):
        return rng.choice(param.values)
    if isinstance(param, (d.Int, d.Float)):
        if param.min is None or param.max is None:
            raise d.ValidationError({param.name: "random draws need declared bounds"})
        lo, hi = param.min, param.max
        if param.log and lo > 0:
            x = math.exp(rng.uniform(math.log(lo), math.log(hi)))
        else:
            x = rng.uniform(lo, hi)
        return int(round(x)) if isinstance(param, d.Int) else x
    raise d.ValidationError({param.name: f"cannot draw random values for a {param.kind} parameter"})


def expand(
    decl: d.Experiment, base: dict[str, Any], grid: dict[str, list[Any]], rand: dict[str, int], seed: int = 0
) -> list[tuple[dict[str, Any], int]]:
    """Every child (config, seed), each validated by the declaration; raises before anything is created."""
    rng = random.Random(seed)
    n_random = next(iter(rand.values()), 1)
    draws = [
        {name: (rng.randrange(2**31) if name == "seed" else _draw(decl.param(name), rng)) for name in rand}
        for _ in range(n_random)
    ]
    names = list(grid)
    combos = list(itertools.product(*(grid[n] for n in names))) if names else [()]
    children = []
    errors: dict[str, str] = {}
    for combo in combos:
        for draw in draws:
            values = dict(base)
            values.update(dict(zip(names, combo, strict=True)))
            values.update(draw)
            child_seed = int(values.pop("seed", seed))
            try:
                children.append((decl.validate(values), child_seed))
            except d.ValidationError as exc:
                errors.update(exc.errors)
    if errors:
        raise d.ValidationError(errors)
    return children


@transaction.atomic
def create_sweep(
    experiment: Experiment,
    base: dict[str, Any],
    axes_text: str,
    *,
    owner=None,
    seed: int = 0,
    device: str = "auto",
    concurrency: int = 2,
    note: str = "",
) -> Sweep:  # type: ignore[no-untyped-def]
    """Validate every child first; then create the sweep and its queued children; dispatch up to the cap."""
    from .services import check_quota, create_run

    decl = experiment.declaration
    grid, rand = parse_axes(decl, axes_text)
    children = expand(decl, base, grid, rand, seed)
    cap = settings.PAPERLAB["MAX_SWEEP_SIZE"]
    if len(children) > cap:
        raise d.ValidationError({"axes": f"this sweep has {len(children)} runs; the limit is {cap}"})
    if not 1 <= concurrency <= 64:
        raise d.ValidationError({"concurrency": "must be between 1 and 64"})
    check_quota(owner)
    sweep = Sweep.objects.create(
        experiment=experiment,
        owner=owner if owner is not None and owner.is_authenticated else None,
        spec={"base": base, "axes_text": axes_text, "grid": grid, "random": rand, "seed": seed, "device": device},
        concurrency=concurrency,
        note=note,
    )
    for config, child_seed in children:
        run = create_run(
            experiment, config, owner=owner, seed=child_seed, device=device, source="sweep", dispatch=False, check=False
        )
        Run.objects.filter(pk=run.pk).update(sweep=sweep)
    transaction.on_commit(lambda: advance_sweep(sweep.pk))
    return sweep


def advance_sweep(sweep_id: int) -> int:
    """Dispatch queued, not yet dispatched children while fewer than ``concurrency`` are in flight."""
    from .services import dispatch_run

    started = 0
    with transaction.atomic():
        sweep = Sweep.objects.select_for_update().filter(pk=sweep_id).first()
        if sweep is None:
            return 0
        runs = sweep.runs.filter(deleted_at__isnull=True)
        in_flight = (
            runs.filter(status=RunStatus.RUNNING).count()
            + runs.filter(status=RunStatus.QUEUED).exclude(task_id="").count()
        )
        free = max(0, sweep.concurrency - in_flight)
        pending = list(runs.filter(status=RunStatus.QUEUED, task_id="", cancel_requested=False).order_by("id")[:free])
        for run in pending:
            Run.objects.filter(pk=run.pk).update(task_id="dispatching")
    for run in pending:
        dispatch_run(run)
        started += 1
    return started
