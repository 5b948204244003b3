"""One config dataclass per experiment, mirroring the parameters declared in apps/prefixshakeup."""

from __future__ import annotations

from dataclasses import dataclass, field

from compute.core.config import FromParams as _FromParams

from .schedule import DEFAULT_COST
from .tagger import TaggerConfig
from .workload import WorkloadConfig


@dataclass
class _Workload(_FromParams):
    users: int = 300
    records_mean: int = 100  # K ~ clip(N(mean, mean/3), mean/2, 3·mean)
    templates: int = 2000  # M record templates
    communities: int = 8  # C
    zipf_alpha: float = 1.1
    community_pool: int = 200  # templates each community's own Zipf ranking covers (design choice)
    omega: float = 1.0  # order sensitivity of the rule label
    seed: int = 0
    device: str = "cpu"

    def workload(self) -> WorkloadConfig:
        return WorkloadConfig(
            users=self.users,
            records_mean=self.records_mean,
            records_min=max(2, self.records_mean // 2),
            records_max=3 * self.records_mean,
            templates=self.templates,
            communities=self.communities,
            zipf_alpha=self.zipf_alpha,
            community_pool=self.community_pool,
            omega=self.omega,
            seed=self.seed,
        )


@dataclass
class CapacityConfig(_Workload):
    """Experiment 1: throughput vs KV capacity (simulator)."""

    capacities: list[int] = field(default_factory=lambda: [2000, 8000, 32000, 0])  # tokens; 0 = ∞
    d: int = 4  # discordance bound of PrefixShakeup(d, m, C)
    recency: int = 10  # m: last records kept chronological
    batch_size: int = 4  # running requests whose KV is locked
    page_size: int = 1  # 1 = radix (SGLang); 16 = vLLM-style blocks
    clusters: int = 0  # k-medoids clusters (0 = auto √(n/4))
    cost_a: float = DEFAULT_COST[0]
    cost_b: float = DEFAULT_COST[1]
    cost_c: float = DEFAULT_COST[2]

    @property
    def coef(self) -> tuple[float, float, float]:
        return (self.cost_a, self.cost_b, self.cost_c)


@dataclass
class TradeoffConfig(_Workload):
    """Experiment 2: accuracy / agreement vs throughput over the discordance bound d and recency window m."""

    users: int = 120
    records_mean: int = 24  # the tagger trains on 8–64 records
    d_list: list[int] = field(default_factory=lambda: [0, 1, 2, 4, 8])
    m_list: list[int] = field(default_factory=lambda: [0, 10])
    variant: str = "foreign"  # foreign | foreign+note
    capacity: int = 8000
    batch_size: int = 4
    tagger_size: str = "small"
    tagger_steps: int = 0
    tagger_probe: int = 4096  # prompts whose frozen features fit the head (phase 1)
    cost_a: float = DEFAULT_COST[0]
    cost_b: float = DEFAULT_COST[1]
    cost_c: float = DEFAULT_COST[2]

    def tagger(self) -> TaggerConfig:
        return TaggerConfig(
            size=self.tagger_size, steps=self.tagger_steps, probe_prompts=self.tagger_probe, omega=self.omega
        )


@dataclass
class IncrementalConfig(_Workload):
    """Experiment 3: day-by-day churn, adaptor vs full re-plan vs no update."""

    rounds: int = 5
    frac_users: float = 0.1
    frac_records: float = 0.1
    threshold: float = 0.1  # re-plan a cluster when its PHR drops by more than this fraction
    d: int = 4
    recency: int = 10
    capacity: int = 8000
    batch_size: int = 4


@dataclass
class EngineConfig(_Workload):
    """Experiment 4: the real tiny LM with prefix-KV reuse vs the simulator."""

    users: int = 100  # prompts
    records_mean: int = 60
    model: str = "spec"  # spec | medium | small | tagger (the trained tagger's weights)
    policies: list[str] = field(default_factory=lambda: ["original", "lpm", "shakeup"])
    d: int = 4
    recency: int = 10
    capacity: int = 8000
    repeats: int = 3  # median of per-prompt times over repeats
    check_prompts: int = 8  # prompts per policy re-run without cache for max |Δlogit|
    threads: int = 1  # 2 on an idle 2-core machine (spec); 1 under contention (2 threads thrash)


@dataclass
class PlanningConfig(_Workload):
    """Experiment 5: re-forming (planning) cost vs number of prompts."""

    users_list: list[int] = field(default_factory=lambda: [250, 500, 1000, 2000])
    d: int = 4
    recency: int = 10


@dataclass
class BuildConfig(_FromParams):
    """The declared build step: train the tagger on original-order prompts."""

    tagger_size: str = "small"
    tagger_steps: int = 0
    tagger_probe: int = 4096  # prompts whose frozen features fit the head (phase 1)
    omega: float = 1.0
    seed: int = 0
    device: str = "cpu"

    def tagger(self) -> TaggerConfig:
        return TaggerConfig(
            size=self.tagger_size, steps=self.tagger_steps, probe_prompts=self.tagger_probe, omega=self.omega
        )
