"""Creating, dispatching, cancelling and re-running runs (shared by views, API and commands)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from .declare import ValidationError
from .events import publish_state
from .models import Experiment, Run, RunStatus

DEVICES = ("auto", "cpu", "cuda")


class QuotaExceeded(Exception):
    """The user already has too many runs queued or running."""


def resolve_config(experiment: Experiment, config: dict[str, Any] | None, preset: str | None = None) -> dict[str, Any]:
    """Preset values (if any) overlaid by ``config``, validated by the declaration.  Raises ValidationError."""
    decl = experiment.declaration
    data: dict[str, Any] = {}
    if preset:
        row = experiment.preset_rows.filter(name=preset).first()
        if row is None:
            raise ValidationError(
                {
                    "preset": f"unknown preset {preset!r}; known: {', '.join(experiment.preset_rows.values_list('name', flat=True))}"
                }
            )
        data.update(row.values)
    data.update(config or {})
    data.pop("seed", None)
    return decl.validate(data)


def check_quota(user) -> None:  # type: ignore[no-untyped-def]
    if user is None or not user.is_authenticated or user.is_staff:
        return
    cfg = settings.PAPERLAB
    active = (
        Run.objects.visible().filter(owner=user).exclude(source="sweep", task_id="")
    )  # held sweep children don't count
    queued = active.filter(status=RunStatus.QUEUED).count()
    running = active.filter(status=RunStatus.RUNNING).count()
    if queued >= cfg["MAX_QUEUED_RUNS_PER_USER"]:
        raise QuotaExceeded(f"you already have {queued} queued runs (limit {cfg['MAX_QUEUED_RUNS_PER_USER']})")
    if running >= cfg["MAX_CONCURRENT_RUNS_PER_USER"]:
        raise QuotaExceeded(
            f"you already have {running} runs running (limit {cfg['MAX_CONCURRENT_RUNS_PER_USER']}); wait for one to finish"
        )


def queue_for(experiment: Experiment) -> str:
    return "gpu" if experiment.gpu and settings.PAPERLAB["GPU_QUEUE_ENABLED"] else "cpu"


def create_run(
    experiment: Experiment,
    config: dict[str, Any],
    *,
    owner=None,  # type: ignore[no-untyped-def]
    seed: int = 0,
    device: str = "auto",
    source: str = "web",
    dispatch: bool = True,
    tags: list[str] | None = None,
    note: str = "",
    check: bool = True,
) -> Run:
    """Create a queued run from an already validated config and (unless told not to) send it to Celery."""
    if not experiment.enabled or not experiment.in_code:
        raise ValidationError({"experiment": "this experiment is disabled"})
    if device not in DEVICES:
        raise ValidationError({"device": f"must be one of {', '.join(DEVICES)}"})
    if check:
        check_quota(owner)
    run = Run.objects.create(
        experiment=experiment,
        owner=owner if owner is not None and owner.is_authenticated else None,
        config=config,
        seed=int(seed),
        device_requested=device,
        queue=queue_for(experiment),
        source=source,
        tags=tags or [],
        note=note,
    )
    if dispatch:
        transaction.on_commit(lambda: dispatch_run(run))
    return run


def dispatch_run(run: Run) -> None:
    from .tasks import execute_run_task

    decl = run.experiment.declaration
    result = execute_run_task.apply_async(
        args=[run.pk], queue=run.queue, soft_time_limit=decl.soft_time_limit, time_limit=decl.time_limit
    )
    Run.objects.filter(pk=run.pk).update(task_id=result.id or "")


def cancel_run(run: Run) -> Run:
    """Queued → cancelled at once; running → the compute stops at its next report (the reaper
    terminates it after the grace period if it does not)."""
    Run.objects.filter(pk=run.pk, cancel_requested=False).update(
        cancel_requested=True, cancel_requested_at=timezone.now()
    )
    run.refresh_from_db()
    if run.status == RunStatus.QUEUED:
        run.transition(RunStatus.CANCELLED, progress_message="cancelled before start")
        if run.task_id:
            from config.celery import app

            app.control.revoke(run.task_id)
    publish_state(run)
    if run.sweep_id and run.is_terminal:
        from .sweeps import advance_sweep

        transaction.on_commit(lambda: advance_sweep(run.sweep_id))
    return run


def rerun(run: Run, owner=None) -> Run:  # type: ignore[no-untyped-def]
    """A new run with the same experiment, config, seed and device request."""
    return create_run(
        run.experiment,
        dict(run.config),
        owner=owner,
        seed=run.seed,
        device=run.device_requested,
        source="rerun",
        tags=list(run.tags),
    )
