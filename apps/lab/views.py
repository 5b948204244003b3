"""Server-rendered pages: home, paper, run dashboard, runs list, compare, sign-up."""

from __future__ import annotations

import json

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from .declare import ValidationError
from .forms import SignupForm, experiment_form_class
from .models import Experiment, Paper, Run, RunStatus, Sweep
from .services import QuotaExceeded, cancel_run, create_run, rerun
from .sweeps import create_sweep
from .workers import workers_overview


def home(request: HttpRequest) -> HttpResponse:
    papers = Paper.objects.filter(enabled=True, in_code=True).prefetch_related("experiments")
    recent = Run.objects.visible().select_related("experiment__paper", "owner")[:10]
    return render(request, "lab/home.html", {"papers": papers, "recent": recent})


def _initial_from_run(run: Run) -> dict:
    decl = run.experiment.declaration
    initial = {}
    for p in decl.params:
        if p.name in run.config:
            v = run.config[p.name]
            initial[p.name] = ", ".join(map(str, v)) if isinstance(v, list) else v
    initial.update(seed=run.seed, device=run.device_requested)
    return initial


def paper_detail(request: HttpRequest, slug: str) -> HttpResponse:
    paper = get_object_or_404(Paper, slug=slug, enabled=True)
    clone = None
    if request.GET.get("clone", "").isdigit():
        clone = (
            Run.objects.visible()
            .filter(pk=int(request.GET["clone"]), experiment__paper=paper)
            .select_related("experiment")
            .first()
        )
    experiments = []
    for exp in paper.experiments.filter(enabled=True, in_code=True).prefetch_related("preset_rows"):
        decl = exp.declaration
        initial = _initial_from_run(clone) if clone is not None and clone.experiment_id == exp.pk else None
        form = experiment_form_class(decl)(prefix=exp.slug, initial=initial)
        presets = {p.name: p.values for p in exp.preset_rows.all()}
        experiments.append(
            {"exp": exp, "decl": decl, "form": form, "presets_json": json.dumps(presets), "presets": presets}
        )
    runs = Run.objects.visible().filter(experiment__paper=paper).select_related("experiment", "owner")[:20]
    return render(
        request,
        "lab/paper.html",
        {"paper": paper, "experiments": experiments, "runs": runs, "open": clone.experiment.slug if clone else ""},
    )


@login_required
@require_POST
def run_create(request: HttpRequest, slug: str, exp_slug: str) -> HttpResponse:
    exp = get_object_or_404(Experiment, paper__slug=slug, slug=exp_slug, enabled=True)
    form = experiment_form_class(exp.declaration)(request.POST, prefix=exp.slug)
    if form.is_valid():
        try:
            run = create_run(
                exp, form.config, owner=request.user, seed=form.cleaned_data["seed"], device=form.cleaned_data["device"]
            )
        except (QuotaExceeded, ValidationError) as exc:
            messages.error(request, str(exc))
        else:
            return redirect("lab:run", run_id=run.pk)
    paper = exp.paper
    experiments = []
    for other in paper.experiments.filter(enabled=True, in_code=True):
        decl = other.declaration
        f = form if other.pk == exp.pk else experiment_form_class(decl)(prefix=other.slug)
        presets = {p.name: p.values for p in other.preset_rows.all()}
        experiments.append(
            {"exp": other, "decl": decl, "form": f, "presets_json": json.dumps(presets), "presets": presets}
        )
    runs = Run.objects.visible().filter(experiment__paper=paper)[:20]
    return render(
        request,
        "lab/paper.html",
        {"paper": paper, "experiments": experiments, "runs": runs, "open": exp.slug},
        status=400,
    )


def run_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    run = get_object_or_404(Run.objects.visible().select_related("experiment__paper", "owner"), pk=run_id)
    decl = run.experiment.declaration
    panels = [p.describe() for p in decl.panels]
    return render(
        request,
        "lab/run.html",
        {
            "run": run,
            "decl": decl,
            "panels_json": json.dumps(panels),
            "config_json": json.dumps(run.config, indent=1),
            "can_manage": run.can_manage(request.user),
        },
    )


@require_POST
def run_cancel(request: HttpRequest, run_id: int) -> HttpResponse:
    run = get_object_or_404(Run.objects.visible(), pk=run_id)
    if not run.can_manage(request.user):
        return HttpResponseForbidden("only the run's owner or staff may cancel it")
    cancel_run(run)
    return redirect("lab:run", run_id=run.pk)


@login_required
@require_POST
def run_rerun(request: HttpRequest, run_id: int) -> HttpResponse:
    run = get_object_or_404(Run.objects.visible(), pk=run_id)
    try:
        new = rerun(run, owner=request.user)
    except (QuotaExceeded, ValidationError) as exc:
        messages.error(request, str(exc))
        return redirect("lab:run", run_id=run.pk)
    return redirect("lab:run", run_id=new.pk)


def run_list(request: HttpRequest) -> HttpResponse:
    qs = Run.objects.visible().select_related("experiment__paper", "owner")
    f = {k: request.GET.get(k, "") for k in ("paper", "experiment", "status", "owner", "tag", "q", "after", "before")}
    if f["paper"]:
        qs = qs.filter(experiment__paper__slug=f["paper"])
    if f["experiment"]:
        qs = qs.filter(experiment__slug=f["experiment"])
    if f["status"]:
        qs = qs.filter(status=f["status"])
    if f["owner"]:
        qs = qs.filter(owner__username=f["owner"])
    if f["tag"]:
        qs = qs.filter(tags__icontains=f["tag"])
    if f["q"]:
        qs = qs.filter(note__icontains=f["q"])
    if f["after"]:
        qs = qs.filter(created_at__date__gte=f["after"])
    if f["before"]:
        qs = qs.filter(created_at__date__lte=f["before"])
    page = Paginator(qs, 50).get_page(request.GET.get("page"))
    return render(
        request,
        "lab/runs.html",
        {"page": page, "filters": f, "statuses": RunStatus.values, "papers": Paper.objects.all()},
    )


def compare(request: HttpRequest) -> HttpResponse:
    ids = [int(x) for x in request.GET.get("runs", "").replace(" ", "").split(",") if x.isdigit()]
    runs = list(Run.objects.visible().filter(pk__in=ids).select_related("experiment__paper"))
    keys = sorted({k for r in runs for k in r.chunks.values_list("key", flat=True).distinct()})
    params = sorted({k for r in runs for k in r.config})
    differing = [k for k in params if len({json.dumps(r.config.get(k)) for r in runs}) > 1]
    only_diff = request.GET.get("only_diff") == "1"
    if only_diff:
        params = differing
    return render(
        request,
        "lab/compare.html",
        {
            "runs": runs,
            "keys": keys,
            "key": request.GET.get("key", keys[0] if keys else ""),
            "params": params,
            "differing": differing,
            "ids": ",".join(map(str, ids)),
            "only_diff": only_diff,
        },
    )


def signup(request: HttpRequest) -> HttpResponse:
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user)
        return redirect("lab:home")
    return render(request, "registration/signup.html", {"form": form})


@require_POST
def run_annotate(request: HttpRequest, run_id: int) -> HttpResponse:
    """Tags (comma-separated) and a free-text note on a run."""
    run = get_object_or_404(Run.objects.visible(), pk=run_id)
    if not run.can_manage(request.user):
        return HttpResponseForbidden("only the run's owner or staff may edit it")
    run.tags = [t.strip() for t in request.POST.get("tags", "").split(",") if t.strip()][:20]
    run.note = request.POST.get("note", "")[:5000]
    run.save(update_fields=["tags", "note"])
    return redirect("lab:run", run_id=run.pk)


@login_required
@require_POST
def sweep_create(request: HttpRequest, slug: str, exp_slug: str) -> HttpResponse:
    exp = get_object_or_404(Experiment, paper__slug=slug, slug=exp_slug, enabled=True)
    form = experiment_form_class(exp.declaration)(request.POST, prefix=exp.slug)
    axes = request.POST.get("axes_text", "")
    swept = {line.split("=", 1)[0].strip() for line in axes.splitlines() if "=" in line}
    if not form.is_valid():
        # fields that are swept need not be valid as single values
        if set(form.errors) - swept - {"__all__"}:
            messages.error(request, "fix the form: " + "; ".join(f"{k}: {' '.join(v)}" for k, v in form.errors.items()))
            return redirect(f"/papers/{slug}/#exp-{exp_slug}")
    base = {k: v for k, v in (getattr(form, "config", None) or {}).items() if k not in swept}
    if not base:
        base = {
            p.name: form.cleaned_data[p.name]
            for p in exp.declaration.params
            if p.name in form.cleaned_data and p.name not in swept
        }
    try:
        concurrency = int(request.POST.get("concurrency", "2"))
        sweep = create_sweep(
            exp,
            base,
            axes,
            owner=request.user,
            seed=int(form.cleaned_data.get("seed") or 0),
            device=form.cleaned_data.get("device") or "auto",
            concurrency=concurrency,
        )
    except (ValidationError, QuotaExceeded, ValueError) as exc:
        messages.error(request, f"sweep not created: {exc}")
        return redirect(f"/papers/{slug}/#exp-{exp_slug}")
    return redirect("lab:sweep", sweep_id=sweep.pk)


def sweep_detail(request: HttpRequest, sweep_id: int) -> HttpResponse:
    sweep = get_object_or_404(
        Sweep.objects.select_related("experiment__paper", "owner"), pk=sweep_id, deleted_at__isnull=True
    )
    params = [p.name for p in sweep.experiment.declaration.params]
    return render(request, "lab/sweep.html", {"sweep": sweep, "params_json": json.dumps(params)})


def workers(request: HttpRequest) -> HttpResponse:
    return render(request, "lab/workers.html", workers_overview())
