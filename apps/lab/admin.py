"""Admin: staff curate the catalog (enable/disable, descriptions, presets) and inspect runs."""

from __future__ import annotations

from django import forms
from django.contrib import admin

from .declare import ValidationError
from .models import Artifact, Experiment, Paper, Preset, Run, RunLog, RunStatus
from .services import cancel_run


class PresetForm(forms.ModelForm):
    class Meta:
        model = Preset
        fields = ["name", "values"]

    def clean(self):  # type: ignore[no-untyped-def]
        data = super().clean()
        try:
            exp = self.instance.experiment
        except Experiment.DoesNotExist:
            exp = None
        if exp is not None and isinstance(data.get("values"), dict):
            try:
                exp.declaration.validate(data["values"])
            except ValidationError as exc:
                raise forms.ValidationError(f"preset values are invalid: {exc}") from exc
        return data


class PresetInline(admin.TabularInline):
    model = Preset
    form = PresetForm
    extra = 0
    readonly_fields = ["from_code"]


class ExperimentInline(admin.TabularInline):
    model = Experiment
    fields = ["slug", "title", "enabled", "gpu", "in_code"]
    readonly_fields = ["slug", "title", "gpu", "in_code"]
    extra = 0
    can_delete = False
    show_change_link = True


@admin.register(Paper)
class PaperAdmin(admin.ModelAdmin):
    list_display = ["title", "slug", "arxiv", "enabled", "in_code"]
    list_filter = ["enabled", "in_code"]
    search_fields = ["title", "slug", "abstract"]
    readonly_fields = ["slug", "in_code"]
    inlines = [ExperimentInline]


@admin.register(Experiment)
class ExperimentAdmin(admin.ModelAdmin):
    list_display = ["__str__", "title", "enabled", "gpu", "cost_seconds", "in_code"]
    list_filter = ["enabled", "gpu", "paper"]
    search_fields = ["title", "slug", "description"]
    readonly_fields = ["paper", "slug", "compute", "schema", "in_code"]
    inlines = [PresetInline]


class RunLogInline(admin.TabularInline):
    model = RunLog
    extra = 0
    can_delete = False
    readonly_fields = ["seq", "level", "message", "created_at"]


class ArtifactInline(admin.TabularInline):
    model = Artifact
    extra = 0
    readonly_fields = ["name", "file", "size", "content_type"]


@admin.action(description="Cancel selected runs")
def cancel_runs(modeladmin, request, queryset):  # type: ignore[no-untyped-def]
    for run in queryset.exclude(status__in=[RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.CANCELLED]):
        cancel_run(run)


@admin.action(description="Restore soft-deleted runs")
def restore_runs(modeladmin, request, queryset):  # type: ignore[no-untyped-def]
    queryset.update(deleted_at=None)


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ["id", "experiment", "owner", "status", "progress", "device", "created_at", "deleted_at"]
    list_filter = ["status", "experiment__paper", "device", "source"]
    search_fields = ["note", "error", "owner__username"]
    readonly_fields = [f.name for f in Run._meta.fields if f.name not in ("tags", "note", "deleted_at")]
    inlines = [RunLogInline, ArtifactInline]
    actions = [cancel_runs, restore_runs]
