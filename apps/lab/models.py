"""Catalog (Paper, Experiment, Preset) and results (Run and what its reporter stored)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class Paper(models.Model):
    """A paper; code-owned fields are synced from the registry, staff fields are kept."""

    slug = models.SlugField(unique=True)
    title = models.CharField(max_length=300)
    abstract = models.TextField(blank=True)
    arxiv = models.CharField(max_length=40, blank=True)
    authors = models.JSONField(default=list, blank=True)
    tags = models.JSONField(default=list, blank=True)
    venue = models.CharField(max_length=100, blank=True)
    notes = models.TextField(blank=True)
    # staff-managed
    enabled = models.BooleanField(default=True)
    staff_note = models.TextField(blank=True, help_text="Extra text shown on the paper page (staff-edited).")
    in_code = models.BooleanField(default=True, help_text="Still declared by an installed app.")

    class Meta:
        ordering = ["title"]

    def __str__(self) -> str:
        return self.title


class Experiment(models.Model):
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="experiments")
    slug = models.SlugField()
    title = models.CharField(max_length=300)
    description = models.TextField(blank=True)
    compute = models.CharField(max_length=300)
    schema = models.JSONField(default=dict)
    gpu = models.BooleanField(default=False)
    cost_seconds = models.PositiveIntegerField(default=60)
    position = models.PositiveIntegerField(default=0)
    # staff-managed
    enabled = models.BooleanField(default=True)
    staff_description = models.TextField(blank=True)
    in_code = models.BooleanField(default=True)

    class Meta:
        ordering = ["paper__title", "position"]
        constraints = [models.UniqueConstraint(fields=["paper", "slug"], name="uniq_experiment_per_paper")]

    def __str__(self) -> str:
        return self.key

    @property
    def key(self) -> str:
        return f"{self.paper.slug}/{self.slug}"

    @property
    def declaration(self):  # type: ignore[no-untyped-def]
        from .registry import registry

        return registry.experiment(self.key)


class Preset(models.Model):
    """A named configuration; code presets are synced, staff may add their own in the admin."""

    experiment = models.ForeignKey(Experiment, on_delete=models.CASCADE, related_name="preset_rows")
    name = models.CharField(max_length=100)
    values = models.JSONField(default=dict)
    from_code = models.BooleanField(default=False)

    class Meta:
        ordering = ["experiment", "-from_code", "name"]
        constraints = [models.UniqueConstraint(fields=["experiment", "name"], name="uniq_preset_name")]

    def __str__(self) -> str:
        return f"{self.experiment.key}: {self.name}"


class RunStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


TERMINAL = (RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.CANCELLED)
# allowed transitions: to-state -> from-states (compare-and-set in Run.transition)
TRANSITIONS = {
    RunStatus.RUNNING: (RunStatus.QUEUED,),
    RunStatus.SUCCEEDED: (RunStatus.RUNNING,),
    RunStatus.FAILED: (RunStatus.QUEUED, RunStatus.RUNNING),
    RunStatus.CANCELLED: (RunStatus.QUEUED, RunStatus.RUNNING),
}


class RunQuerySet(models.QuerySet):
    def visible(self) -> RunQuerySet:
        return self.filter(deleted_at__isnull=True)


class Sweep(models.Model):
    """A family of child runs over a grid or random draws of parameters, queued with a concurrency cap."""

    experiment = models.ForeignKey(Experiment, on_delete=models.PROTECT, related_name="sweeps")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="sweeps"
    )
    spec = models.JSONField(default=dict)  # {"base": {...}, "axes": {param: [values]}, "mode": "grid"|"random", ...}
    concurrency = models.PositiveIntegerField(default=2)
    created_at = models.DateTimeField(default=timezone.now)
    note = models.TextField(blank=True)
    deleted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"sweep {self.pk} ({self.experiment.key})"

    def counts(self) -> dict[str, int]:
        out = {s: 0 for s in RunStatus.values}
        for status, n in self.runs.values_list("status").annotate(n=models.Count("id")):
            out[status] = n
        out["total"] = sum(out[s] for s in RunStatus.values)
        return out


class Run(models.Model):
    experiment = models.ForeignKey(Experiment, on_delete=models.PROTECT, related_name="runs")
    sweep = models.ForeignKey(Sweep, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs"
    )
    config = models.JSONField(default=dict)
    seed = models.BigIntegerField(default=0)
    device_requested = models.CharField(max_length=10, default="auto")
    device = models.CharField(max_length=100, blank=True)
    queue = models.CharField(max_length=20, default="cpu")
    status = models.CharField(max_length=12, choices=RunStatus.choices, default=RunStatus.QUEUED, db_index=True)
    progress = models.FloatField(default=0.0)
    progress_message = models.CharField(max_length=300, blank=True)
    eta_seconds = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    task_id = models.CharField(max_length=100, blank=True)
    worker = models.CharField(max_length=200, blank=True)
    cancel_requested = models.BooleanField(default=False)
    cancel_requested_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)
    traceback = models.TextField(blank=True)
    summary = models.JSONField(default=dict, blank=True)
    environment = models.JSONField(default=dict, blank=True)
    source = models.CharField(max_length=20, default="web")  # web, api, cli, rerun
    tags = models.JSONField(default=list, blank=True)
    note = models.TextField(blank=True)
    event_seq = models.BigIntegerField(default=0)  # last event sequence number written
    deleted_at = models.DateTimeField(null=True, blank=True)

    objects = RunQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["experiment", "status"]), models.Index(fields=["owner", "status"])]

    def __str__(self) -> str:
        return f"run {self.pk} ({self.experiment.key}, {self.status})"

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL

    @property
    def duration_seconds(self) -> float | None:
        if not self.started_at:
            return None
        end = self.finished_at or timezone.now()
        return (end - self.started_at).total_seconds()

    def transition(self, to: str, **fields: object) -> bool:
        """Compare-and-set the status: True when this call made the transition, False if the run was elsewhere."""
        allowed = TRANSITIONS[RunStatus(to)]
        if to in TERMINAL:
            fields.setdefault("finished_at", timezone.now())
        updated = Run.objects.filter(pk=self.pk, status__in=allowed).update(status=to, **fields)
        if updated:
            self.status = to
            for k, v in fields.items():
                setattr(self, k, v)
        return bool(updated)

    def can_manage(self, user) -> bool:  # type: ignore[no-untyped-def]
        return bool(user and user.is_authenticated and (user.is_staff or user.pk == self.owner_id))


class SeriesChunk(models.Model):
    """A batch of points of one series (not one row per float)."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="chunks")
    key = models.CharField(max_length=200)
    seq = models.BigIntegerField()
    steps = models.JSONField()
    values = models.JSONField()

    class Meta:
        ordering = ["seq"]
        indexes = [models.Index(fields=["run", "key", "seq"]), models.Index(fields=["run", "seq"])]


class RunTable(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="tables")
    key = models.CharField(max_length=200)
    columns = models.JSONField(default=list)
    rows = models.JSONField(default=list)
    seq = models.BigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "key"], name="uniq_table_key")]


class RunFigure(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="figures")
    key = models.CharField(max_length=200)
    figure = models.JSONField(default=dict)
    seq = models.BigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "key"], name="uniq_figure_key")]


class RunLog(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="logs")
    seq = models.BigIntegerField()
    level = models.CharField(max_length=10, default="info")
    message = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["seq"]


def artifact_path(instance: Artifact, filename: str) -> str:
    return f"runs/{instance.run_id}/{filename}"


class Artifact(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="artifacts")
    name = models.CharField(max_length=200)
    file = models.FileField(upload_to=artifact_path, max_length=400)
    content_type = models.CharField(max_length=100, default="application/octet-stream")
    size = models.BigIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "name"], name="uniq_artifact_name")]


class WorkerInfo(models.Model):
    """What each Celery worker said about itself at start and at each task (device, queues)."""

    hostname = models.CharField(max_length=200, unique=True)
    queues = models.JSONField(default=list)
    device = models.CharField(max_length=200, blank=True)
    concurrency = models.PositiveIntegerField(default=1)
    started_at = models.DateTimeField(default=timezone.now)
    last_seen = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["hostname"]
