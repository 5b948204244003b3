"""Endpoint-specific sample-size rules for bound endpoints L = max_k T_k / min_k T_k (spec §2).

Target P(|L̂ − L| ≤ ε) ≥ 1 − α; z = z_{1−α/2} for one endpoint, z_{1−α/4} (Bonferroni) for both.
The base size n is the experimental sample *per arm*; the observational sample is n_o = r_o · n, with
r_o = ratio (allocation given per arm) or 2·ratio (allocation given against the experimental total).
Per-observation covariance Σ₁ = blockdiag(e1(1−e1), e0(1−e0), (diag o − ooᵀ)/r_o).

* Rule 1, distribution-free (affine terms), Popoviciu: Var(aᵀθ̂)·n ≤ a_e1²/4 + a_e0²/4 + range(a_o)²/(4 r_o);
  n = z² max_k V_k / ε².
* Rule 2/3, plug-in delta method at planning values θ (rule 3, "active") or pilot estimates (rule 2, "pilot"):
  T̂_k ≈ N(T_k, σ_k²/n), σ_k² = g_kᵀΣ₁g_k; n is the smallest size with the Gaussian union bound
  Σ_k Φ̄((ε + gap_k)√n/σ_k) + Φ̄(ε√n/σ_active) ≤ α, gap_k = |L − T_k| (for a max: any term may overshoot
  L + ε, the active term must undershoot L − ε).  One active term far from the rest gives n = z²σ²/ε²;
  tied terms share α (directional worst case over the near-active set).  **Design choice** (smooth in gaps,
  no threshold τ).
* Rule 2 "safe": the plug-in maximised over a simultaneous (1 − α_p) Clopper–Pearson box around the
  pilot cells (Bonferroni over the 6 cells; box corners + a bounded compass search).  **Design choice.**
* Baseline, Li, Mao & Pearl (NeurIPS 2022): its formula is not available here, so it is never computed.
  A user may enter the baseline's design (n_e, n_o) read from that paper as an *external design*; the rules
  then report n_baseline/n_rule and the simulator measures attainment at it.  Without one it raises.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import special, stats

from .bounds import DEN_MIN, THETA_NAMES, Endpoint, endpoint
from .sampling import theta_cov

RULES = ("distribution_free", "plugin_active", "plugin_pilot", "plugin_safe", "baseline")
RULE_LABELS = {
    "distribution_free": "distribution-free (Popoviciu)",
    "plugin_active": "active-term plug-in (planning values)",
    "plugin_pilot": "pilot plug-in (naive)",
    "plugin_safe": "pilot plug-in (safe, Clopper–Pearson box)",
    "baseline": "Li, Mao & Pearl 2022 (baseline)",
}


class BaselineNotImplemented(NotImplementedError):
    """The Li–Mao–Pearl (2022) formula is not available in this workspace (spec §2: do not guess it)."""


@dataclass(frozen=True)
class ExternalDesign:
    """A design entered by the user (e.g. read from Li, Mao & Pearl 2022): n_e counted per ``basis``, and n_o.

    Nothing here computes it; it is carried through so that its attainment and n_external/n_rule can be measured.
    """

    n_e: int
    n_o: int
    basis: str = "per_arm"

    def __post_init__(self) -> None:
        if self.n_e < 1 or self.n_o < 1:
            raise ValueError("an external design needs n_e ≥ 1 and n_o ≥ 1")
        if self.basis not in ("per_arm", "total"):
            raise ValueError(f"unknown basis {self.basis!r}")

    @property
    def n_arm(self) -> int:
        return self.n_e if self.basis == "per_arm" else math.ceil(self.n_e / 2)

    def sizes(self, mult: float = 1.0) -> tuple[int, int, int]:
        """(n per experimental arm, n_e total, n_o) scaled by ``mult``, rounded up per source."""
        n_arm = max(1, math.ceil(mult * self.n_arm - 1e-9))
        return n_arm, 2 * n_arm, max(1, math.ceil(mult * self.n_o - 1e-9))


def z_value(confidence: float, both: bool = False) -> float:
    """z_{1−α/2} for one endpoint, z_{1−α/4} for a joint guarantee on both endpoints (Bonferroni)."""
    alpha = 1.0 - confidence
    return float(stats.norm.ppf(1 - alpha / (4 if both else 2)))


@dataclass(frozen=True)
class Allocation:
    """n_o / n_e = ratio, where n_e is per arm (basis "per_arm") or the experimental total ("total")."""

    ratio: float = 1.0
    basis: str = "per_arm"

    @property
    def r_o(self) -> float:
        """Observational sample per unit of the per-arm experimental n."""
        return self.ratio * (2.0 if self.basis == "total" else 1.0)

    def sizes(self, n_exact: float) -> tuple[int, int, int]:
        """(n per experimental arm, n_e total, n_o), each rounded up after allocation."""
        n_arm = max(1, math.ceil(n_exact - 1e-9))
        n_o = max(1, math.ceil(self.r_o * n_exact - 1e-9))
        return n_arm, 2 * n_arm, n_o


def sigma1(theta: np.ndarray, alloc: Allocation) -> np.ndarray:
    """Per-observation covariance Σ₁ (..., 6, 6) for base n = experimental per arm."""
    return theta_cov(theta, 1.0, 1.0, alloc.r_o)


def term_variances(ep: Endpoint, theta: np.ndarray, alloc: Allocation) -> np.ndarray:
    """Per-observation delta-method variances g_kᵀΣ₁g_k, shape (..., K)."""
    g = ep.gradients(theta)
    s = sigma1(theta, alloc)
    return np.einsum("...ki,...ij,...kj->...k", g, s, g)


def popoviciu_variances(ep: Endpoint, alloc: Allocation) -> np.ndarray:
    """Distribution-free per-observation variance bounds V_k for affine terms (K,); NaN for ratio terms."""
    a = ep.a
    v = a[:, 0] ** 2 / 4 + a[:, 1] ** 2 / 4 + (a[:, 2:].max(axis=1) - a[:, 2:].min(axis=1)) ** 2 / (4 * alloc.r_o)
    return np.where(ep.affine, v, np.nan)


@dataclass
class EndpointDesign:
    """Required size for one endpoint under one rule, with the term-by-term table."""

    endpoint: str
    rule: str
    n_exact: float  # base n (experimental per arm), before rounding
    n_arm: int
    n_e_total: int
    n_o: int
    active: str  # the term that drives n
    formula: str
    terms: list[dict] = field(default_factory=list)


def _check_denominators(ep: Endpoint, theta: np.ndarray) -> None:
    den = ep.d + np.asarray(theta) @ ep.b.T
    if np.any(~ep.affine & (den <= DEN_MIN)):
        raise ValueError(f"{ep.name}: ratio bound undefined, its denominator P(x,y) is 0 at the planning values")


def distribution_free(ep: Endpoint, eps: float, z: float, alloc: Allocation) -> EndpointDesign:
    """Rule 1: n = z² max_k V_k / ε² with Popoviciu's V_k (affine endpoints only)."""
    if not np.all(ep.affine):
        raise ValueError(f"{ep.name}: the distribution-free rule needs affine terms; use a plug-in rule for ratios")
    v = popoviciu_variances(ep, alloc)
    k = int(np.argmax(v))
    n = z**2 * v[k] / eps**2
    n_arm, n_tot, n_o = alloc.sizes(n)
    rows = [
        {"term": lab, "V_k (per obs.)": float(v[i]), "n_k": z**2 * float(v[i]) / eps**2}
        for i, lab in enumerate(ep.labels)
    ]
    formula = f"n = z²·max_k V_k/ε² = {z:.4f}²·{v[k]:.4f}/{eps:g}² = {n:.2f}"
    return EndpointDesign(ep.name, "distribution_free", float(n), n_arm, n_tot, n_o, ep.labels[k], formula, rows)


def miss_bound(v: np.ndarray, gaps: np.ndarray, n: np.ndarray, eps: float) -> np.ndarray:
    """Gaussian union bound on P(|L̂ − L| > ε) at base size n, vectorised: v, gaps (..., K), n (...).

    For L = max_k T_k:  L̂ > L + ε needs some T̂_k > L + ε  → Σ_k Φ̄((ε + gap_k)√n/σ_k);
                        L̂ < L − ε needs every T̂_k < L − ε → min_{k active} Φ̄(ε√n/σ_k)   (mirror for min).
    σ_k² = v_k = g_kᵀΣ₁g_k per observation; a zero-variance (constant) term contributes 0.
    """
    far_x, near_x = _margins(v, gaps, eps)
    return _bound(far_x, near_x, np.sqrt(np.asarray(n, dtype=float))[..., None])


def _margins(v: np.ndarray, gaps: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """Standardised margins (ε + gap_k)/σ_k and, for active terms only, ε/σ_k (inf elsewhere)."""
    inv_sd = np.where(v > 0, 1.0 / np.sqrt(np.where(v > 0, v, 1.0)), np.inf)
    return (eps + gaps) * inv_sd, np.where(gaps <= 1e-12, eps * inv_sd, np.inf)


def _bound(far_x: np.ndarray, near_x: np.ndarray, root_n: np.ndarray) -> np.ndarray:
    return special.ndtr(-far_x * root_n).sum(axis=-1) + special.ndtr(-(near_x.min(axis=-1) * root_n[..., 0]))


def plugin_n(ep: Endpoint, theta: np.ndarray, eps: float, alpha: float, alloc: Allocation) -> np.ndarray:
    """Plug-in n(θ): the smallest base n with miss_bound ≤ α (bisection on log n), vectorised over θ (..., 6).

    With one active term and the others far away this is z_{1−α/2}²·gᵀΣ₁g/ε² exactly.
    """
    theta = np.asarray(theta, dtype=float)
    v = np.clip(term_variances(ep, theta, alloc), 0.0, None)
    gaps = np.nan_to_num(ep.gaps(theta), nan=0.0)
    far_x, near_x = _margins(v, gaps, eps)
    z_hi = special.ndtri(1 - alpha / (2 * v.shape[-1] + 2))
    hi = np.maximum(z_hi**2 * np.max(v / (eps + gaps) ** 2, axis=-1), 1e-9)  # bound ≤ α here (union over K+1)
    lo = hi * 1e-4  # the answer is ≥ z_{1−α/2}²·max σ²/(ε+gap)² ≥ hi·(z_{1−α/2}/z_hi)² > hi·1e-4
    for _ in range(34):  # relative precision (1e4)^(2^-34) − 1 ≈ 5e-10
        mid = np.sqrt(lo * hi)
        ok = _bound(far_x, near_x, np.sqrt(mid)[..., None]) <= alpha
        hi = np.where(ok, mid, hi)
        lo = np.where(ok, lo, mid)
    return np.where(np.max(v, axis=-1) > 0, hi, 0.0)


def plugin(
    ep: Endpoint, theta: np.ndarray, eps: float, alpha: float, alloc: Allocation, rule: str = "plugin_active"
) -> EndpointDesign:
    """Rules 2/3 (naive): the delta-method plug-in at θ (planning values or pilot estimates).

    n solves Σ_k Φ̄((ε + gap_k)√n/σ_k) + Φ̄(ε√n/σ_active) = α (Gaussian union bound over the terms).
    """
    theta = np.asarray(theta, dtype=float)
    _check_denominators(ep, theta)
    v = term_variances(ep, theta, alloc)
    t = ep.terms(theta)
    gaps = ep.gaps(theta)
    z = float(stats.norm.ppf(1 - alpha / 2))
    nk = z**2 * v / (eps + gaps) ** 2  # single-term requirement of each term (diagnostic)
    k = int(np.argmax(nk))
    n = float(plugin_n(ep, theta, eps, alpha, alloc))
    n_arm, n_tot, n_o = alloc.sizes(n)
    rows = [
        {"term": lab, "T_k": float(t[i]), "gap": float(gaps[i]), "gᵀΣ₁g": float(v[i]), "n_k": float(nk[i])}
        for i, lab in enumerate(ep.labels)
    ]
    formula = (
        f"n: Σ_k Φ̄((ε+gap_k)√n/σ_k) + Φ̄(ε√n/σ_active) = α = {alpha:.4g} → n = {n:.2f} "
        f"(driving term alone: z²·σ²/(ε+gap)² = {z:.4f}²·{v[k]:.4g}/({eps:g}+{gaps[k]:.3g})² = {nk[k]:.2f})"
    )
    return EndpointDesign(ep.name, rule, n, n_arm, n_tot, n_o, ep.labels[k], formula, rows)


@dataclass(frozen=True)
class Pilot:
    """Pilot counts: successes/trials per experimental arm and the observational cell counts (o11, o10, o01, o00)."""

    s1: int
    m1: int
    s0: int
    m0: int
    obs: tuple[int, int, int, int]

    def __post_init__(self) -> None:
        if self.m1 < 1 or self.m0 < 1 or sum(self.obs) < 1:
            raise ValueError("pilot sizes must be positive")
        if not (0 <= self.s1 <= self.m1 and 0 <= self.s0 <= self.m0) or min(self.obs) < 0:
            raise ValueError("pilot counts out of range")

    @property
    def m_o(self) -> int:
        return int(sum(self.obs))

    @property
    def theta(self) -> np.ndarray:
        return np.array([self.s1 / self.m1, self.s0 / self.m0, *(c / self.m_o for c in self.obs)])

    def box(self, alpha_p: float) -> tuple[np.ndarray, np.ndarray]:
        """Simultaneous (1 − α_p) Clopper–Pearson box over the 6 cells (Bonferroni: α_p/6 each)."""
        a = alpha_p / 6
        k = np.array([self.s1, self.s0, *self.obs], dtype=float)
        m = np.array([self.m1, self.m0] + [self.m_o] * 4, dtype=float)
        lo = np.where(k > 0, stats.beta.ppf(a / 2, k, m - k + 1), 0.0)
        hi = np.where(k < m, stats.beta.ppf(1 - a / 2, k + 1, m - k), 1.0)
        return np.nan_to_num(lo, nan=0.0), np.nan_to_num(hi, nan=1.0)


def sample_pilot(theta: np.ndarray, m_e: int, m_o: int, rng: np.random.Generator) -> Pilot:
    """Draw a pilot of m_e per experimental arm and m_o observational units from θ."""
    o = rng.multinomial(m_o, np.asarray(theta[2:]) / np.sum(theta[2:]))
    return Pilot(int(rng.binomial(m_e, theta[0])), m_e, int(rng.binomial(m_e, theta[1])), m_e, tuple(int(c) for c in o))


def safe_plugin(
    ep: Endpoint,
    pilot: Pilot,
    eps: float,
    alpha: float,
    alloc: Allocation,
    alpha_p: float = 0.1,
    local_iters: int = 16,
) -> EndpointDesign:
    """Rule 2 (safe): max of n(θ) over the Clopper–Pearson box; covers n(θ_true) w.p. ≥ 1 − α_p."""
    lo, hi = pilot.box(alpha_p)
    den_lo = ep.d + lo @ ep.b.T  # smallest denominator in the box (b ≥ 0)
    if np.any(~ep.affine & (den_lo <= DEN_MIN)):
        raise ValueError(f"{ep.name}: the pilot cannot rule out P(x,y) = 0; enlarge the pilot")
    corners = np.array(np.meshgrid(*[[lo[i], hi[i]] for i in range(6)], indexing="ij")).reshape(6, -1).T
    cand = np.vstack([corners, pilot.theta[None]])
    vals = plugin_n(ep, cand, eps, alpha, alloc)
    theta_star, best = cand[int(np.argmax(vals))], float(vals.max())
    # bounded local optimizer: compass search inside the box, all 12 axis moves evaluated at once
    step = 0.25 * (hi - lo)
    moves = np.vstack([np.eye(6), -np.eye(6)])
    for _ in range(local_iters):
        trial = np.clip(theta_star + moves * step, lo, hi)
        tv = plugin_n(ep, trial, eps, alpha, alloc)
        j = int(np.argmax(tv))
        if tv[j] > best * (1 + 1e-9):
            theta_star, best = trial[j], float(tv[j])
        else:
            step = step / 2
    d = plugin(ep, theta_star, eps, alpha, alloc, rule="plugin_safe")
    d.formula = (
        f"n = max over the {100 * (1 - alpha_p):g}% Clopper–Pearson box of the plug-in n(θ); "
        f"worst θ = ({', '.join(f'{n}={v:.3f}' for n, v in zip(THETA_NAMES, theta_star, strict=True))}) → {d.n_exact:.2f}"
    )
    return d


def baseline(ep: Endpoint, external: ExternalDesign | None = None) -> EndpointDesign:
    """Li, Mao & Pearl (NeurIPS 2022).  Its formula is not implemented: the paper's text is not available here
    (spec §2).  With ``external`` (the design the user read from that paper) the design is carried as given."""
    if external is None:
        raise BaselineNotImplemented(
            "Li, Mao & Pearl (2022) sample-size formula: not implemented (paper text unavailable; spec forbids "
            "guessing); enter its n_e and n_o to compare against it"
        )
    n_arm, n_tot, n_o = external.sizes()
    formula = (
        f"user-entered Li–Mao–Pearl (2022) design: n_e = {external.n_e} ({external.basis.replace('_', ' ')}), "
        f"n_o = {external.n_o} (not computed here)"
    )
    return EndpointDesign(ep.name, "baseline", float(n_arm), n_arm, n_tot, n_o, "—", formula)


def design(
    family: str,
    side: str,
    rule: str,
    eps: float,
    confidence: float,
    alloc: Allocation,
    theta: np.ndarray | None = None,
    pilot: Pilot | None = None,
    alpha_p: float = 0.1,
    external: ExternalDesign | None = None,
) -> list[EndpointDesign]:
    """Designs for ``side`` ∈ {lower, upper, both}; with "both" each endpoint uses z_{1−α/4} (Bonferroni).

    ``external`` is the user-entered baseline design (rule "baseline"); its sizes are used as given."""
    sides = ["lower", "upper"] if side == "both" else [side]
    z = z_value(confidence, both=side == "both")
    alpha = (1.0 - confidence) / len(sides)  # two-sided miss probability per endpoint (Bonferroni)
    out = []
    for s in sides:
        ep = endpoint(family, s)
        if rule == "distribution_free":
            out.append(distribution_free(ep, eps, z, alloc))
        elif rule == "plugin_active":
            if theta is None:
                raise ValueError("the active-term plug-in needs planning values")
            out.append(plugin(ep, theta, eps, alpha, alloc))
        elif rule == "plugin_pilot":
            if pilot is None:
                raise ValueError("the pilot plug-in needs pilot counts")
            out.append(plugin(ep, pilot.theta, eps, alpha, alloc, rule="plugin_pilot"))
        elif rule == "plugin_safe":
            if pilot is None:
                raise ValueError("the safe plug-in needs pilot counts")
            out.append(safe_plugin(ep, pilot, eps, alpha, alloc, alpha_p))
        elif rule == "baseline":
            out.append(baseline(ep, external))
        else:
            raise ValueError(f"unknown rule {rule!r}")
    return out


def combined_n(designs: list[EndpointDesign]) -> float:
    """The base n satisfying every endpoint (largest requirement)."""
    return max(d.n_exact for d in designs)


def total_units(n_e_total: int, n_o: int) -> int:
    """All units a design recruits: both experimental arms plus the observational sample."""
    return int(n_e_total + n_o)
