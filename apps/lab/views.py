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
from .models import Experiment, Paper, Run, RunStatus
from .services import QuotaExceeded, cancel_run, create_run, rerun


def home(request: HttpRequest) -> HttpResponse:
    papers = Paper.objects.filter(enabled=True, in_code=True).prefetch_related("experiments")
    recent = Run.objects.visible().select_related("experiment__paper", "owner")[:10]
    return render(request, "lab/home.html", {"papers": papers, "recent": recent})


def paper_detail(request: HttpRequest, slug: str) -> HttpResponse:
    paper = get_object_or_404(Paper, slug=slug, enabled=True)
    experiments = []
    for exp in paper.experiments.filter(enabled=True, in_code=True).prefetch_related("preset_rows"):
        decl = exp.declaration
        form = experiment_form_class(decl)(prefix=exp.slug)
        presets = {p.name: p.values for p in exp.preset_rows.all()}
        experiments.append({"exp": exp, "decl": decl, "form": form, "presets_json": json.dumps(presets), "presets": presets})
    runs = Run.objects.visible().filter(experiment__paper=paper).select_related("experiment", "owner")[:20]
    return render(request, "lab/paper.html", {"paper": paper, "experiments": experiments, "runs": runs})


@login_required
@require_POST
def run_create(request: HttpRequest, slug: str, exp_slug: str) -> HttpResponse:
    exp = get_object_or_404(Experiment, paper__slug=slug, slug=exp_slug, enabled=True)
    form = experiment_form_class(exp.declaration)(request.POST, prefix=exp.slug)
    if form.is_valid():
        try:
            run = create_run(exp, form.config, owner=request.user, seed=form.cleaned_data["seed"], device=form.cleaned_data["device"])
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
        experiments.append({"exp": other, "decl": decl, "form": f, "presets_json": json.dumps(presets), "presets": presets})
    runs = Run.objects.visible().filter(experiment__paper=paper)[:20]
    return render(request, "lab/paper.html", {"paper": paper, "experiments": experiments, "runs": runs, "open": exp.slug}, status=400)


def run_detail(request: HttpRequest, run_id: int) -> HttpResponse:
    run = get_object_or_404(Run.objects.visible().select_related("experiment__paper", "owner"), pk=run_id)
    decl = run.experiment.declaration
    panels = [p.describe() for p in decl.panels]
    return render(
        request,
        "lab/run.html",
        {"run": run, "decl": decl, "panels_json": json.dumps(panels), "config_json": json.dumps(run.config, indent=1), "can_manage": run.can_manage(request.user)},
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
    f = {k: request.GET.get(k, "") for k in ("paper", "experiment", "status", "owner")}
    if f["paper"]:
        qs = qs.filter(experiment__paper__slug=f["paper"])
    if f["experiment"]:
        qs = qs.filter(experiment__slug=f["experiment"])
    if f["status"]:
        qs = qs.filter(status=f["status"])
    if f["owner"]:
        qs = qs.filter(owner__username=f["owner"])
    page = Paginator(qs, 50).get_page(request.GET.get("page"))
    return render(request, "lab/runs.html", {"page": page, "filters": f, "statuses": RunStatus.values, "papers": Paper.objects.all()})


def compare(request: HttpRequest) -> HttpResponse:
    ids = [int(x) for x in request.GET.get("runs", "").replace(" ", "").split(",") if x.isdigit()]
    runs = list(Run.objects.visible().filter(pk__in=ids).select_related("experiment__paper"))
    keys = sorted({k for r in runs for k in r.chunks.values_list("key", flat=True).distinct()})
    params = sorted({k for r in runs for k in r.config})
    differing = [k for k in params if len({json.dumps(r.config.get(k)) for r in runs}) > 1]
    return render(
        request,
        "lab/compare.html",
        {"runs": runs, "keys": keys, "key": request.GET.get("key", keys[0] if keys else ""), "params": params, "differing": differing, "ids": ",".join(map(str, ids))},
    )


def signup(request: HttpRequest) -> HttpResponse:
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user)
        return redirect("lab:home")
    return render(request, "registration/signup.html", {"form": form})
