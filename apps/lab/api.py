"""REST API (DRF): papers, experiments (with parameter JSON Schemas), runs, series, artifacts."""

from __future__ import annotations

from typing import Any

from django.http import FileResponse, Http404, HttpResponse
from django.shortcuts import get_object_or_404
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, permissions, serializers, status, viewsets
from rest_framework.authtoken.models import Token
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.decorators import action
from rest_framework.exceptions import Throttled
from rest_framework.pagination import CursorPagination
from rest_framework.request import Request
from rest_framework.response import Response

from .declare import ValidationError as ConfigError
from .events import series_for
from .exports import bundle, export_json, series_csv, summary_csv, table_csv
from .models import Experiment, Paper, Run, Sweep
from .services import DEVICES, QuotaExceeded, cancel_run, create_run, rerun, resolve_config
from .sweeps import create_sweep


# --- serializers ---------------------------------------------------------------------------------
class PaperSerializer(serializers.ModelSerializer):
    experiments = serializers.SerializerMethodField()

    class Meta:
        model = Paper
        fields = ["slug", "title", "abstract", "arxiv", "authors", "tags", "venue", "experiments"]

    def get_experiments(self, obj: Paper) -> list[str]:
        return [e.key for e in obj.experiments.filter(enabled=True, in_code=True)]


class ExperimentSerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="key", read_only=True)
    paper = serializers.CharField(source="paper.slug", read_only=True)
    params = serializers.SerializerMethodField()
    presets = serializers.SerializerMethodField()
    panels = serializers.SerializerMethodField()

    class Meta:
        model = Experiment
        fields = [
            "id",
            "paper",
            "slug",
            "title",
            "description",
            "schema",
            "params",
            "presets",
            "panels",
            "gpu",
            "cost_seconds",
        ]

    def get_params(self, obj: Experiment) -> list[dict[str, Any]]:
        return [p.describe() for p in obj.declaration.params]

    def get_presets(self, obj: Experiment) -> dict[str, Any]:
        return {p.name: p.values for p in obj.preset_rows.all()}

    def get_panels(self, obj: Experiment) -> list[dict[str, Any]]:
        return [p.describe() for p in obj.declaration.panels]


class RunSerializer(serializers.ModelSerializer):
    experiment = serializers.CharField(source="experiment.key", read_only=True)
    owner = serializers.CharField(source="owner.username", read_only=True, default=None)
    url = serializers.SerializerMethodField()

    class Meta:
        model = Run
        fields = [
            "id",
            "url",
            "experiment",
            "owner",
            "status",
            "config",
            "seed",
            "device_requested",
            "device",
            "queue",
            "progress",
            "progress_message",
            "eta_seconds",
            "created_at",
            "started_at",
            "finished_at",
            "heartbeat_at",
            "task_id",
            "cancel_requested",
            "error",
            "traceback",
            "summary",
            "environment",
            "source",
            "tags",
            "note",
        ]
        read_only_fields = fields

    def get_url(self, obj: Run) -> str:
        return f"/runs/{obj.pk}/"


class RunListSerializer(RunSerializer):
    """Runs in lists: without the bulky traceback and environment (retrieve one run for those)."""

    class Meta(RunSerializer.Meta):
        fields = [f for f in RunSerializer.Meta.fields if f not in ("traceback", "environment")]
        read_only_fields = fields


class RunCreateSerializer(serializers.Serializer):
    experiment = serializers.CharField(help_text="'<paper>/<experiment>', e.g. 'toptwo_bai/live_run'")
    config = serializers.DictField(
        required=False, default=dict, help_text="Parameter values; see the experiment's schema."
    )
    preset = serializers.CharField(
        required=False, allow_blank=True, help_text="Start from a named preset; config overrides it."
    )
    seed = serializers.IntegerField(required=False, default=0, min_value=0, max_value=2**31 - 1)
    device = serializers.ChoiceField(choices=DEVICES, required=False, default="auto")
    tags = serializers.ListField(
        child=serializers.CharField(max_length=50), required=False, default=list, max_length=20
    )
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=5000)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        key = attrs["experiment"]
        paper, _, slug = key.partition("/")
        exp = Experiment.objects.filter(paper__slug=paper, slug=slug, in_code=True).select_related("paper").first()
        if exp is None:
            raise serializers.ValidationError({"experiment": f"unknown experiment {key!r}"})
        if not exp.enabled:
            raise serializers.ValidationError({"experiment": f"experiment {key!r} is disabled"})
        try:
            attrs["config"] = resolve_config(exp, attrs.get("config"), attrs.get("preset") or None)
        except ConfigError as exc:
            errors = dict(exc.errors)
            if "preset" in errors:
                raise serializers.ValidationError({"preset": errors.pop("preset")}) from None
            raise serializers.ValidationError({"config": errors}) from None
        attrs["experiment_obj"] = exp
        return attrs


class RunPatchSerializer(serializers.Serializer):
    tags = serializers.ListField(child=serializers.CharField(max_length=50), required=False, max_length=20)
    note = serializers.CharField(required=False, allow_blank=True, max_length=5000)


# --- permissions -----------------------------------------------------------------------------------
class IsOwnerOrStaffOrReadOnly(permissions.BasePermission):
    def has_object_permission(self, request: Request, view: Any, obj: Run) -> bool:
        if request.method in permissions.SAFE_METHODS:
            return True
        return obj.can_manage(request.user)


# --- viewsets --------------------------------------------------------------------------------------
class PaperViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = Paper.objects.filter(enabled=True, in_code=True)
    serializer_class = PaperSerializer
    lookup_field = "slug"


class ExperimentViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = ExperimentSerializer
    lookup_value_regex = r"[a-z0-9_]+/[a-z0-9_]+"
    lookup_url_kwarg = "key"

    def get_queryset(self):  # type: ignore[no-untyped-def]
        qs = (
            Experiment.objects.filter(enabled=True, in_code=True)
            .select_related("paper")
            .prefetch_related("preset_rows")
        )
        paper = self.request.query_params.get("paper")
        return qs.filter(paper__slug=paper) if paper else qs

    def get_object(self) -> Experiment:
        paper, _, slug = self.kwargs["key"].partition("/")
        return get_object_or_404(self.get_queryset(), paper__slug=paper, slug=slug)


class RunCursorPagination(CursorPagination):
    ordering = ("-created_at", "-id")
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500


@extend_schema(
    parameters=[
        OpenApiParameter("paper", str, description="paper slug"),
        OpenApiParameter("experiment", str, description="'<paper>/<experiment>' or experiment slug"),
        OpenApiParameter("status", str, enum=["queued", "running", "succeeded", "failed", "cancelled"]),
        OpenApiParameter("owner", str, description="username"),
        OpenApiParameter("tag", str),
        OpenApiParameter("q", str, description="search in notes"),
        OpenApiParameter("sweep", int, description="sweep id"),
        OpenApiParameter("created_after", str, description="ISO date/datetime"),
        OpenApiParameter("created_before", str, description="ISO date/datetime"),
    ]
)
class RunViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.DestroyModelMixin, viewsets.GenericViewSet):
    serializer_class = RunSerializer
    pagination_class = RunCursorPagination
    permission_classes = [permissions.IsAuthenticatedOrReadOnly, IsOwnerOrStaffOrReadOnly]

    def get_throttles(self):  # type: ignore[no-untyped-def]
        self.throttle_scope = "run_create" if self.action == "create" else None
        return super().get_throttles()

    def get_serializer_class(self):  # type: ignore[no-untyped-def]
        return RunListSerializer if self.action == "list" else RunSerializer

    def get_queryset(self):  # type: ignore[no-untyped-def]
        qs = Run.objects.visible().select_related("experiment__paper", "owner")
        p = self.request.query_params
        bad = [k for k, v in p.items() if "\x00" in v]
        if bad:  # PostgreSQL text cannot hold NUL: a clear 400, not a 500
            raise serializers.ValidationError({k: "must not contain NUL characters" for k in bad})
        if p.get("paper"):
            qs = qs.filter(experiment__paper__slug=p["paper"])
        if p.get("experiment"):
            paper, _, slug = p["experiment"].rpartition("/")
            qs = qs.filter(experiment__slug=slug, **({"experiment__paper__slug": paper} if paper else {}))
        if p.get("status"):
            qs = qs.filter(status=p["status"])
        if p.get("owner"):
            qs = qs.filter(owner__username=p["owner"])
        if p.get("tag"):
            qs = (
                qs.filter(tags__contains=[p["tag"]])
                if _json_contains_supported()
                else qs.filter(tags__icontains=p["tag"])
            )
        if p.get("q"):
            qs = qs.filter(note__icontains=p["q"])
        if p.get("sweep"):
            qs = qs.filter(sweep_id=p["sweep"]) if p["sweep"].isdigit() else qs.none()
        for name, lookup in (("created_after", "created_at__gte"), ("created_before", "created_at__lt")):
            if p.get(name):
                from django.utils.dateparse import parse_date, parse_datetime

                when = parse_datetime(p[name]) or parse_date(p[name])
                if when is not None and not hasattr(when, "hour"):
                    import datetime as _dt

                    when = _dt.datetime.combine(when, _dt.time.min, tzinfo=_dt.UTC)
                if when is None:
                    raise serializers.ValidationError({name: "must be an ISO date or datetime"})
                qs = qs.filter(**{lookup: when})
        return qs

    @extend_schema(request=RunCreateSerializer, responses={201: RunSerializer})
    def create(self, request: Request) -> Response:
        ser = RunCreateSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        v = ser.validated_data
        try:
            run = create_run(
                v["experiment_obj"],
                v["config"],
                owner=request.user,
                seed=v["seed"],
                device=v["device"],
                source="api",
                tags=v["tags"],
                note=v["note"],
            )
        except QuotaExceeded as exc:
            raise Throttled(detail=str(exc)) from None
        except ConfigError as exc:
            return Response(exc.errors, status=status.HTTP_400_BAD_REQUEST)
        return Response(RunSerializer(run).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=RunPatchSerializer, responses=RunSerializer)
    def partial_update(self, request: Request, pk: str | None = None) -> Response:
        run = self.get_object()
        ser = RunPatchSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        for k, v in ser.validated_data.items():
            setattr(run, k, v)
        run.save(update_fields=list(ser.validated_data) or None)
        return Response(RunSerializer(run).data)

    def perform_destroy(self, instance: Run) -> None:
        if not instance.is_terminal:
            cancel_run(instance)
        instance.deleted_at = timezone.now()
        instance.save(update_fields=["deleted_at"])

    @extend_schema(request=None, responses=RunSerializer)
    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, pk: str | None = None) -> Response:
        run = self.get_object()
        return Response(RunSerializer(cancel_run(run)).data)

    @extend_schema(request=None, responses={201: RunSerializer})
    @action(detail=True, methods=["post"], permission_classes=[permissions.IsAuthenticated])
    def rerun(self, request: Request, pk: str | None = None) -> Response:
        run = get_object_or_404(Run.objects.visible(), pk=pk)
        try:
            new = rerun(run, owner=request.user)
        except QuotaExceeded as exc:
            raise Throttled(detail=str(exc)) from None
        return Response(RunSerializer(new).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        parameters=[
            OpenApiParameter("keys", str, description="comma-separated series keys (default: all)"),
            OpenApiParameter(
                "max_points", int, description="downsample each series to at most this many points (min/max per bucket)"
            ),
        ],
        responses=OpenApiTypes.OBJECT,
    )
    @action(detail=True, methods=["get"])
    def series(self, request: Request, pk: str | None = None) -> Response:
        run = self.get_object()
        keys = [k for k in request.query_params.get("keys", "").split(",") if k]
        try:
            max_points = int(request.query_params.get("max_points", "0") or 0)
        except ValueError:
            return Response({"max_points": "must be an integer"}, status=400)
        if max_points < 0 or max_points > 10_000_000:
            return Response({"max_points": "must be between 0 and 10000000"}, status=400)
        return Response({"run": run.pk, "series": series_for(run, keys or None, max_points or None)})

    @extend_schema(responses=OpenApiTypes.OBJECT)
    @action(detail=True, methods=["get"])
    def results(self, request: Request, pk: str | None = None) -> Response:
        """Tables, figures and logs of a run."""
        run = self.get_object()
        return Response(
            {
                "tables": {t.key: {"columns": t.columns, "rows": t.rows} for t in run.tables.all()},
                "figures": {f.key: f.figure for f in run.figures.all()},
                "logs": [{"level": lg.level, "message": lg.message} for lg in run.logs.all()],
            }
        )

    @extend_schema(responses=OpenApiTypes.OBJECT)
    @action(detail=True, methods=["get"], url_path="artifacts")
    def artifacts(self, request: Request, pk: str | None = None) -> Response:
        run = self.get_object()
        return Response(
            [
                {
                    "name": a.name,
                    "size": a.size,
                    "content_type": a.content_type,
                    "url": f"/api/runs/{run.pk}/artifacts/{a.name}/",
                }
                for a in run.artifacts.all()
            ]
        )

    @extend_schema(
        operation_id="runs_artifact_download", responses={(200, "application/octet-stream"): OpenApiTypes.BINARY}
    )
    @action(detail=True, methods=["get"], url_path=r"artifacts/(?P<name>[^/]+)")
    def artifact(self, request: Request, pk: str | None = None, name: str = "") -> FileResponse:
        run = self.get_object()
        art = run.artifacts.filter(name=name).first()
        if art is None:
            raise Http404("no such artifact")
        return FileResponse(art.file.open("rb"), content_type=art.content_type, as_attachment=True, filename=art.name)

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "what",
                str,
                enum=["all", "series", "summary", "table"],
                description="json: all; csv: series, summary or table",
            ),
            OpenApiParameter("fmt", str, enum=["json", "csv"]),
            OpenApiParameter("key", str, description="table key (what=table) or comma-separated series keys"),
        ],
        responses={(200, "text/csv"): OpenApiTypes.STR, (200, "application/json"): OpenApiTypes.OBJECT},
    )
    @action(detail=True, methods=["get"])
    def export(self, request: Request, pk: str | None = None) -> HttpResponse:
        """The run's series, tables and summary as CSV or JSON (full resolution)."""
        run = self.get_object()
        fmt = request.query_params.get("fmt", "json")
        what = request.query_params.get("what", "all" if fmt == "json" else "series")
        key = request.query_params.get("key", "")
        if fmt == "json":
            body, ctype, ext = __import__("json").dumps(export_json(run)), "application/json", "json"
        elif fmt == "csv" and what == "series":
            body, ctype, ext = series_csv(run, [k for k in key.split(",") if k] or None), "text/csv", "csv"
        elif fmt == "csv" and what == "summary":
            body, ctype, ext = summary_csv(run), "text/csv", "csv"
        elif fmt == "csv" and what == "table":
            if not run.tables.filter(key=key).exists():
                return Response({"key": f"no table {key!r}"}, status=400)
            body, ctype, ext = table_csv(run, key), "text/csv", "csv"
        else:
            return Response({"fmt": "use fmt=json, or fmt=csv with what=series|summary|table"}, status=400)
        resp = HttpResponse(body, content_type=ctype)
        resp["Content-Disposition"] = f'attachment; filename="run-{run.pk}-{what}.{ext}"'
        return resp

    @extend_schema(responses={(200, "application/zip"): OpenApiTypes.BINARY})
    @action(detail=True, methods=["get"])
    def bundle(self, request: Request, pk: str | None = None) -> HttpResponse:
        """config + environment + results as a zip that `manage.py importrun` restores elsewhere."""
        run = self.get_object()
        resp = HttpResponse(bundle(run), content_type="application/zip")
        resp["Content-Disposition"] = f'attachment; filename="run-{run.pk}.zip"'
        return resp


# --- sweeps ----------------------------------------------------------------------------------------
class SweepSerializer(serializers.ModelSerializer):
    experiment = serializers.CharField(source="experiment.key", read_only=True)
    owner = serializers.CharField(source="owner.username", read_only=True, default=None)
    counts = serializers.SerializerMethodField()
    runs = serializers.SerializerMethodField()

    class Meta:
        model = Sweep
        fields = ["id", "experiment", "owner", "spec", "concurrency", "created_at", "note", "counts", "runs"]

    def get_counts(self, obj: Sweep) -> dict[str, int]:
        return obj.counts()

    def get_runs(self, obj: Sweep) -> list[dict[str, Any]]:
        return [
            {
                "id": r.pk,
                "status": r.status,
                "config": r.config,
                "seed": r.seed,
                "summary": r.summary,
                "progress": r.progress,
            }
            for r in obj.runs.filter(deleted_at__isnull=True).order_by("id")
        ]


class SweepCreateSerializer(serializers.Serializer):
    experiment = serializers.CharField()
    base = serializers.DictField(required=False, default=dict, help_text="fixed parameter values")
    preset = serializers.CharField(required=False, allow_blank=True)
    axes_text = serializers.CharField(
        max_length=5000, help_text="one 'param = values' per line: lists, range(), linspace(), logspace(), random(n)"
    )
    seed = serializers.IntegerField(required=False, default=0, min_value=0, max_value=2**31 - 1)
    device = serializers.ChoiceField(choices=DEVICES, required=False, default="auto")
    concurrency = serializers.IntegerField(required=False, default=2, min_value=1, max_value=64)
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=5000)


class SweepViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    serializer_class = SweepSerializer
    permission_classes = [permissions.IsAuthenticatedOrReadOnly]
    queryset = Sweep.objects.filter(deleted_at__isnull=True).select_related("experiment__paper", "owner")

    @extend_schema(request=SweepCreateSerializer, responses={201: SweepSerializer})
    def create(self, request: Request) -> Response:
        ser = SweepCreateSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        v = ser.validated_data
        paper, _, slug = v["experiment"].partition("/")
        exp = (
            Experiment.objects.filter(paper__slug=paper, slug=slug, in_code=True, enabled=True)
            .select_related("paper")
            .first()
        )
        if exp is None:
            return Response({"experiment": f"unknown experiment {v['experiment']!r}"}, status=400)
        try:
            resolve_config(exp, v["base"], v.get("preset") or None)  # names the bad field early
            base = dict(exp.preset_rows.get(name=v["preset"]).values) if v.get("preset") else {}
            base.update(v["base"])
            sweep = create_sweep(
                exp,
                base,
                v["axes_text"],
                owner=request.user,
                seed=v["seed"],
                device=v["device"],
                concurrency=v["concurrency"],
                note=v["note"],
            )
        except ConfigError as exc:
            return Response(exc.errors, status=400)
        except QuotaExceeded as exc:
            raise Throttled(detail=str(exc)) from None
        return Response(SweepSerializer(sweep).data, status=201)

    @extend_schema(request=None, responses=SweepSerializer)
    @action(detail=True, methods=["post"])
    def cancel(self, request: Request, pk: str | None = None) -> Response:
        sweep = self.get_object()
        if not (request.user.is_staff or request.user.pk == sweep.owner_id):
            return Response({"detail": "only the sweep's owner or staff may cancel it"}, status=403)
        for run in sweep.runs.exclude(status__in=["succeeded", "failed", "cancelled"]):
            cancel_run(run)
        return Response(SweepSerializer(sweep).data)


# --- auth tokens -------------------------------------------------------------------------------------
class TokenView(ObtainAuthToken):
    """POST username+password → token (throttled); DELETE revokes the caller's token."""

    throttle_scope = "auth"

    def get_throttles(self):  # type: ignore[no-untyped-def]
        from rest_framework.throttling import ScopedRateThrottle

        return [ScopedRateThrottle()]

    @extend_schema(request=None, responses={204: None})
    def delete(self, request: Request) -> Response:
        if not request.user or not request.user.is_authenticated:
            return Response({"detail": "authentication required"}, status=401)
        Token.objects.filter(user=request.user).delete()
        return Response(status=204)


def _json_contains_supported() -> bool:
    from django.db import connection

    return connection.vendor == "postgresql"
