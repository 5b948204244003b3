"""Sharp bounds for multi-valued PoC families by linear programming (scipy HiGHS), with duals.

Variables q ≥ 0 over the joint of (X, Y_{x_0}, …, Y_{x_{k−1}}) (kx · ky^kx cells).  Constraints (spec §2):

    Σ q[Y_x = y] = P(y_x)          experimental, for every x and y ≥ 1 (y = 0 is implied by Σ q = 1)
    Σ q[X = x, Y_x = y] = P(x, y)  consistency, for every (x, y) (their sum gives Σ q = 1)

The data vector b = (P(y_x) for x, y ≥ 1; P(x, y) for all x, y) has no redundant rows, so the equality
duals ``res.eqlin.marginals`` are the gradient ∂v/∂b of the optimal value: the active term's gradient for
the delta method.  Queries (generalising Tian–Pearl's binary PNS/PN/PS, Li & Pearl's nonbinary PoCs):

    PNS(x_a, y_a; x_b, y_b) = P(Y_{x_a} = y_a, Y_{x_b} = y_b)
    PN  = P(Y_{x_b} = y_b | X = x_a, Y = y_a) = P(X = x_a, Y_{x_a} = y_a, Y_{x_b} = y_b) / P(x_a, y_a)
    PS  = P(Y_{x_a} = y_a | X = x_b, Y = y_b) = P(X = x_b, Y_{x_b} = y_b, Y_{x_a} = y_a) / P(x_b, y_b)

Ratio queries divide a linear objective by an observational constant, so they stay LPs.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog


@dataclass(frozen=True)
class Family:
    """A PoC query on |X| = kx treatments and |Y| = ky outcomes."""

    kx: int = 2
    ky: int = 2
    query: str = "PNS"  # "PNS", "PN" or "PS"
    xa: int = 1
    ya: int = 1
    xb: int = 0
    yb: int = 0

    def __post_init__(self) -> None:
        if not (2 <= self.kx <= 3 and 2 <= self.ky <= 3):
            raise ValueError("multi-valued families need 2 ≤ |X|, |Y| ≤ 3")
        if self.xa == self.xb:
            raise ValueError("the two treatments x_a, x_b must differ")
        if not (
            0 <= self.xa < self.kx and 0 <= self.xb < self.kx and 0 <= self.ya < self.ky and 0 <= self.yb < self.ky
        ):
            raise ValueError("treatment/outcome index out of range")
        if self.query not in ("PNS", "PN", "PS"):
            raise ValueError(f"unknown query {self.query!r}")

    @property
    def cells(self) -> np.ndarray:
        """(n_cells, 1 + kx) array of (x, y_{x_0}, …, y_{x_{kx−1}})."""
        grids = [range(self.kx)] + [range(self.ky)] * self.kx
        return np.array(list(itertools.product(*grids)), dtype=int)

    @property
    def n_exp(self) -> int:
        return self.kx * (self.ky - 1)

    @property
    def n_obs(self) -> int:
        return self.kx * self.ky

    def constraint_matrix(self) -> np.ndarray:
        """A (n_exp + n_obs, n_cells) with rows ordered as b (see module docstring)."""
        c = self.cells
        rows = []
        for x in range(self.kx):
            for y in range(1, self.ky):
                rows.append((c[:, 1 + x] == y).astype(float))
        for x in range(self.kx):
            for y in range(self.ky):
                rows.append(((c[:, 0] == x) & (c[:, 1 + x] == y)).astype(float))
        return np.array(rows)

    def b_names(self) -> list[str]:
        """Labels of the data vector b."""
        exp = [f"P(Y_{x}={y})" for x in range(self.kx) for y in range(1, self.ky)]
        return exp + [f"P(X={x},Y={y})" for x in range(self.kx) for y in range(self.ky)]

    def objective(self) -> np.ndarray:
        """Linear numerator of the query over the cells."""
        c = self.cells
        ya_ok = c[:, 1 + self.xa] == self.ya
        yb_ok = c[:, 1 + self.xb] == self.yb
        if self.query == "PNS":
            return (ya_ok & yb_ok).astype(float)
        if self.query == "PN":
            return ((c[:, 0] == self.xa) & ya_ok & yb_ok).astype(float)
        return ((c[:, 0] == self.xb) & yb_ok & ya_ok).astype(float)

    def denominator_index(self) -> int | None:
        """Index in b of the observational denominator P(x, y) (None for PNS)."""
        if self.query == "PNS":
            return None
        x, y = (self.xa, self.ya) if self.query == "PN" else (self.xb, self.yb)
        return self.n_exp + x * self.ky + y

    # -- data from a joint over the cells -------------------------------------------------------
    def data_from_joint(self, q: np.ndarray) -> np.ndarray:
        """b = A q for a joint q over the cells."""
        return self.constraint_matrix() @ np.asarray(q, dtype=float)

    def random_joint(self, rng: np.random.Generator) -> np.ndarray:
        """A Dirichlet(1) joint over the kx · ky^kx cells."""
        return rng.dirichlet(np.ones(len(self.cells)))

    def true_value(self, q: np.ndarray) -> float:
        num = float(self.objective() @ q)
        j = self.denominator_index()
        return num if j is None else num / float(self.data_from_joint(q)[j])


@dataclass
class LPBound:
    """Optimal value of one side and its gradient with respect to the data vector b."""

    value: float
    grad: np.ndarray  # (len(b),)
    q: np.ndarray  # an optimal joint


def lp_bound(family: Family, b: np.ndarray, side: str) -> LPBound:
    """min (side="lower") or max (side="upper") of the query subject to A q = b, q ≥ 0 (HiGHS).

    For ratio queries the value is (cᵀq*)/b_j and the gradient adds the quotient-rule term −v/b_j on b_j.
    """
    b = np.asarray(b, dtype=float)
    a_eq = family.constraint_matrix()
    obj = family.objective()
    sign = 1.0 if side == "lower" else -1.0
    res = linprog(sign * obj, A_eq=a_eq, b_eq=b, bounds=(0, None), method="highs")
    if res.status != 0:
        raise ValueError(f"LP infeasible or failed ({res.message}): inconsistent experimental/observational data")
    num = sign * res.fun
    grad = sign * np.asarray(res.eqlin.marginals, dtype=float)
    j = family.denominator_index()
    if j is None:
        return LPBound(float(num), grad, res.x)
    den = b[j]
    if den <= 1e-12:
        raise ValueError("ratio PoC undefined: its observational denominator P(x, y) is zero")
    value = num / den
    g = grad / den
    g[j] -= value / den
    return LPBound(float(value), g, res.x)


def binary_family(query: str) -> Family:
    """The binary family whose LP reproduces Tian–Pearl: x_a = 1, y_a = 1, x_b = 0, y_b = 0."""
    return Family(2, 2, query, xa=1, ya=1, xb=0, yb=0)


def binary_b_from_theta(theta: np.ndarray) -> np.ndarray:
    """Map θ = (e1, e0, o11, o10, o01, o00) onto b = (P(y_{x=0}=1), P(y_{x=1}=1), P(0,0), P(0,1), P(1,0), P(1,1))."""
    e1, e0, o11, o10, o01, o00 = np.asarray(theta, dtype=float)
    return np.array([e0, e1, o00, o01, o10, o11])


def binary_theta_grad(grad_b: np.ndarray) -> np.ndarray:
    """Pull a gradient w.r.t. b back to θ order (inverse of :func:`binary_b_from_theta`)."""
    g0, g1, g00, g01, g10, g11 = grad_b
    return np.array([g1, g0, g11, g10, g01, g00])


# ------------------------------------------------------------------------------------------------
# Sampling model and variance of the LP endpoint
# ------------------------------------------------------------------------------------------------
def per_obs_covariance(family: Family, b: np.ndarray, r_e: float = 1.0, r_o: float = 1.0) -> np.ndarray:
    """Σ₁ for b: each experimental arm is Mult(n_e r_e, P(·_x)), observational data Mult(n_o = n r_o, P(x, y)).

    Blocks: arm x → (diag p_x − p_x p_xᵀ)/r_e restricted to y ≥ 1; observational → (diag o − ooᵀ)/r_o.
    """
    b = np.asarray(b, dtype=float)
    m = family.ky - 1
    cov = np.zeros((len(b), len(b)))
    for x in range(family.kx):
        p = b[x * m : (x + 1) * m]
        cov[x * m : (x + 1) * m, x * m : (x + 1) * m] = (np.diag(p) - np.outer(p, p)) / r_e
    o = b[family.n_exp :]
    cov[family.n_exp :, family.n_exp :] = (np.diag(o) - np.outer(o, o)) / r_o
    return cov


def popoviciu_variance(family: Family, grad: np.ndarray, r_e: float = 1.0, r_o: float = 1.0) -> float:
    """Distribution-free bound on per-observation gᵀΣ₁g: Σ_sources (max_j g_j − min_j g_j)²/(4 r).

    The implicit y = 0 cell of each arm has coefficient 0 (it is not a free parameter).
    """
    m = family.ky - 1
    v = 0.0
    for x in range(family.kx):
        g = np.append(grad[x * m : (x + 1) * m], 0.0)
        v += (g.max() - g.min()) ** 2 / (4 * r_e)
    g = grad[family.n_exp :]
    v += (g.max() - g.min()) ** 2 / (4 * r_o)
    return float(v)


def near_active_duals(
    family: Family, q: np.ndarray, side: str, radius: float, rng: np.random.Generator, probes: int = 16
) -> list[np.ndarray]:
    """Gradients of the LP endpoint at b and at consistent data within ~radius of it.

    The LP value is a max/min of finitely many affine pieces (dual vertices); probing b' = A((1 − λ)q + λq̃)
    with q̃ ~ Dirichlet(1) and λ ≤ radius collects the pieces that can become active within the margin: the
    LP analogue of the near-active term set.  **Design choice** (the closed forms enumerate terms instead).
    """
    a_eq = family.constraint_matrix()
    grads = [lp_bound(family, a_eq @ q, side).grad]
    for i in range(probes):
        lam = radius * (0.5 + 0.5 * (i % 2))
        qq = (1 - lam) * q + lam * family.random_joint(rng)
        try:
            g = lp_bound(family, a_eq @ qq, side).grad
        except ValueError:
            continue
        if not any(np.allclose(g, h, atol=1e-9) for h in grads):
            grads.append(g)
    return grads
