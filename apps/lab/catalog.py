"""Sync the catalog tables from the code registry (idempotent; run on migrate and by the start command)."""

from __future__ import annotations

from django.db import transaction

from .models import Experiment, Paper, Preset
from .registry import registry


@transaction.atomic
def sync_catalog() -> dict[str, int]:
    """Create/update Paper, Experiment and code Preset rows; mark rows no longer declared.

    Code-owned fields are overwritten; staff fields (enabled, staff_note/description, staff presets) are kept.
    """
    registry.load()
    counts = {"papers": 0, "experiments": 0, "presets": 0}
    seen_papers, seen_exps = set(), set()
    for paper_decl in registry.papers.values():
        paper, _ = Paper.objects.update_or_create(
            slug=paper_decl.slug,
            defaults=dict(
                title=paper_decl.title,
                abstract=paper_decl.abstract,
                arxiv=paper_decl.arxiv,
                authors=list(paper_decl.authors),
                tags=list(paper_decl.tags),
                venue=paper_decl.venue,
                notes=paper_decl.notes,
                in_code=True,
            ),
        )
        seen_papers.add(paper.pk)
        counts["papers"] += 1
        for pos, decl in enumerate(registry.for_paper(paper_decl.slug)):
            exp, _ = Experiment.objects.update_or_create(
                paper=paper,
                slug=decl.slug,
                defaults=dict(
                    title=decl.title,
                    description=decl.description,
                    compute=decl.compute,
                    schema=decl.json_schema(),
                    gpu=decl.gpu,
                    cost_seconds=decl.cost_seconds,
                    position=pos,
                    in_code=True,
                ),
            )
            seen_exps.add(exp.pk)
            counts["experiments"] += 1
            for name, values in decl.presets.items():
                Preset.objects.update_or_create(
                    experiment=exp, name=name, defaults={"values": values, "from_code": True}
                )
                counts["presets"] += 1
            Preset.objects.filter(experiment=exp, from_code=True).exclude(name__in=list(decl.presets)).delete()
    Paper.objects.exclude(pk__in=seen_papers).update(in_code=False)
    Experiment.objects.exclude(pk__in=seen_exps).update(in_code=False)
    return counts
