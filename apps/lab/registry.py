"""The code registry: every installed paper app's ``experiments.py`` (PAPER, EXPERIMENTS)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

from django.apps import apps as django_apps

from .declare import DeclarationError, Experiment, Paper


@dataclass
class Registry:
    papers: dict[str, Paper] = field(default_factory=dict)
    experiments: dict[str, Experiment] = field(default_factory=dict)  # "paper/experiment" -> Experiment
    errors: list[str] = field(default_factory=list)
    loaded: bool = False

    def load(self) -> None:
        """Import ``<app>.experiments`` for every installed app that has one (idempotent)."""
        if self.loaded:
            return
        for config in django_apps.get_app_configs():
            if config.name == "apps.lab":
                continue
            try:
                module = importlib.import_module(f"{config.name}.experiments")
            except ModuleNotFoundError as exc:
                if exc.name == f"{config.name}.experiments":
                    continue
                raise
            self.register(module, config.name)
        self.loaded = True

    def register(self, module: object, origin: str) -> None:
        paper = getattr(module, "PAPER", None)
        experiments = getattr(module, "EXPERIMENTS", None)
        if not isinstance(paper, Paper):
            raise DeclarationError(f"{origin}.experiments must define PAPER = Paper(...)")
        if not isinstance(experiments, (list, tuple)) or not all(isinstance(e, Experiment) for e in experiments):
            raise DeclarationError(f"{origin}.experiments must define EXPERIMENTS = [Experiment(...), ...]")
        if paper.slug in self.papers:
            raise DeclarationError(f"paper slug {paper.slug!r} declared twice")
        self.papers[paper.slug] = paper
        for exp in experiments:
            exp.paper = paper
            if exp.id in self.experiments:
                raise DeclarationError(f"experiment {exp.id!r} declared twice")
            self.experiments[exp.id] = exp

    def experiment(self, experiment_id: str) -> Experiment:
        self.load()
        try:
            return self.experiments[experiment_id]
        except KeyError:
            raise KeyError(f"unknown experiment {experiment_id!r}; see `manage.py runexperiment --list`") from None

    def for_paper(self, slug: str) -> list[Experiment]:
        return [e for e in self.experiments.values() if e.paper and e.paper.slug == slug]


registry = Registry()
