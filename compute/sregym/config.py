"""Config dataclasses mirroring the declared parameters of each experiment (apps/sregym/experiments.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

from compute.core.config import FromParams as _FromParams


@dataclass
class IncidentConfig(_FromParams):
    """E1: one problem, one agent, one noise level."""

    problem: str = "bad_password_catalog"
    agent: str = "scripted"  # scripted | llm
    noise: str = "off"  # off | low | high
    max_steps: int = 20
    rate: float = 30.0  # client λ (rps)
    baseline_s: float = 10.0
    settle_s: float = 6.0
    deadline_s: float = 60.0
    alert_s: float = 0.0
    probe_s: float = 5.0
    mitigation: bool = True  # run the mitigation oracle (off: detection and diagnosis only)
    llm_base_url: str = ""
    llm_model: str = "gpt-4o-mini"
    seed: int = 0


@dataclass
class SweepConfig(_FromParams):
    """E2: problems × agents × seeds (background)."""

    problem_set: str = "suite"  # suite | a category | one problem id
    agents: str = "scripted"  # scripted | llm | scripted+llm
    n_seeds: int = 1
    noise: str = "off"
    rate: float = 30.0
    baseline_s: float = 10.0
    settle_s: float = 6.0
    deadline_s: float = 60.0
    probe_s: float = 5.0
    mitigation: bool = True
    max_steps: int = 20
    llm_base_url: str = ""
    llm_model: str = "gpt-4o-mini"
    seed: int = 0


@dataclass
class MetastableConfig(_FromParams):
    """E3: retries × load grid around the λ(1+R) = μ boundary."""

    retries: list[int] = field(default_factory=lambda: [0, 1])
    rates: list[float] = field(default_factory=lambda: [30.0, 60.0])
    c: int = 4
    service_ms: float = 50.0
    timeout_ms: float = 400.0
    backoff_ms: float = 0.0
    queue_limit: int = 64
    trigger_ms: float = 200.0
    trigger_s: float = 5.0
    warmup_s: float = 3.0
    after_s: float = 12.0
    seed: int = 0


@dataclass
class NoiseConfig(_FromParams):
    """E4: one fault × noise {off, low, high}, plus no-fault controls."""

    problem: str = "bad_password_catalog"
    levels: str = "off,low,high"
    n_seeds: int = 1
    n_controls: int = 1
    rate: float = 30.0
    baseline_s: float = 10.0
    settle_s: float = 6.0
    probe_s: float = 5.0
    seed: int = 0
