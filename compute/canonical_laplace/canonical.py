"""Orbit-invariant canonicalizers c(θ) = D(θ)θ with D(Sθ) = D(θ)S⁻¹ (paper §3, "γ-canonicalization").

D = S(t(θ)) is the orbit action of neuron scales t(θ) with t(S(s)θ) = t(θ)/s, hence c(Sθ) = c(θ).
The paper's exact γ-parameterisation is not public; two families are implemented (design choice):

* ``A`` (default), γ-interpolated normal form: t_γ = t⁽⁰⁾^{1−γ} · t⁽¹⁾^γ, where t⁽⁰⁾ makes every hidden
  neuron's incoming vector (row of W_l and b_l) unit-norm (forward pass) and t⁽¹⁾ makes every outgoing
  column of W_{l+1} unit-norm (backward pass).  One hidden layer: ‖in_c‖ = r^γ, ‖out_c‖ = r^{1−γ},
  r = ‖in‖·‖out‖.
* ``B``, ENorm (Stock et al. 2019): t = argmin Σ_l ω_l‖W̃_l‖² (biases included), by the block closed
  form s_i = (ω_{l+1}‖out_i‖²/(ω_l‖in_i‖²))^{1/4}; no γ.  One hidden layer: equals A at γ = ½.

Degenerate neurons (a zero incoming vector, or a zero outgoing column) do not affect f; they are left
out of their neighbours' norms and normalised by their other side afterwards; if both are zero, t = 1.
"""

from __future__ import annotations

import torch
from torch import Tensor

from .model import MLP, neuron_to_param_scale


def _in_sq(w: Tensor, b: Tensor, t_prev: Tensor, t_out: Tensor) -> Tensor:
    """‖incoming vector‖² of each neuron after scaling: rows of (t_out[i] W[i,j]/t_prev[j], t_out[i] b[i])."""
    return t_out**2 * (((w / t_prev[None, :]) ** 2).sum(1) + b**2)


def _out_sq(w_next: Tensor, t_next: Tensor, t: Tensor) -> Tensor:
    """‖outgoing column‖² of each neuron after scaling: column i of t_next[k] W_next[k,i] / t[i]."""
    return ((w_next * t_next[:, None]) ** 2).sum(0) / t**2


def input_normal_scales(mlp: MLP, theta: Tensor) -> list[Tensor]:
    """t⁽⁰⁾: forward pass giving each hidden neuron a unit-norm incoming vector (row of W_l and b_l)."""
    layers = mlp.unflatten(theta)
    ones = theta.new_ones
    t_prev = ones(mlp.widths[0])
    ts, dead_in = [], []
    for w, b in layers[:-1]:
        n = _in_sq(w, b, t_prev, ones(w.shape[0])).sqrt()
        zero = n == 0
        t = torch.where(zero, ones(n.shape), 1.0 / torch.where(zero, ones(n.shape), n))
        # a neuron with zero incoming vector outputs relu(0)=0: leave its column out of the next norms
        t_prev = torch.where(zero, torch.full_like(t, float("inf")), t)
        ts.append(t)
        dead_in.append(zero)
    # fill degenerate neurons from their outgoing column (backwards, so the next layer is final)
    t_next = ones(mlp.widths[-1])
    for li in range(len(ts) - 1, -1, -1):
        w_next = layers[li + 1][0]
        if dead_in[li].any():
            m = ((w_next * t_next[:, None]) ** 2).sum(0).sqrt()
            fill = torch.where(m > 0, m, ones(m.shape))
            ts[li] = torch.where(dead_in[li], fill, ts[li])
        t_next = ts[li]
    return ts


def output_normal_scales(mlp: MLP, theta: Tensor) -> list[Tensor]:
    """t⁽¹⁾: backward pass giving each hidden neuron a unit-norm outgoing column of W_{l+1}."""
    layers = mlp.unflatten(theta)
    ones = theta.new_ones
    n_hidden = len(mlp.hidden)
    ts: list[Tensor] = [ones(h) for h in mlp.hidden]
    dead_out: list[Tensor] = [torch.zeros(h, dtype=torch.bool, device=theta.device) for h in mlp.hidden]
    t_next = ones(mlp.widths[-1])
    for li in range(n_hidden - 1, -1, -1):
        w_next = layers[li + 1][0]
        m = ((w_next * t_next[:, None]) ** 2).sum(0).sqrt()
        zero = m == 0
        ts[li] = torch.where(zero, ones(m.shape), m)
        dead_out[li] = zero
        # a neuron with zero outgoing column does not reach f: leave its row out of the previous norms
        t_next = torch.where(zero, torch.zeros_like(m), ts[li])
    # fill degenerate neurons from their incoming vector (forwards, so the previous layer is final)
    t_prev = ones(mlp.widths[0])
    for li in range(n_hidden):
        w, b = layers[li]
        if dead_out[li].any():
            n = _in_sq(w, b, t_prev, ones(w.shape[0])).sqrt()
            fill = torch.where(n > 0, 1.0 / torch.where(n > 0, n, ones(n.shape)), ones(n.shape))
            ts[li] = torch.where(dead_out[li], fill, ts[li])
        t_prev = ts[li]
    return ts


def enorm_scales(
    mlp: MLP, theta: Tensor, omega: list[float] | None = None, rtol: float = 1e-12, max_iter: int = 20000
) -> tuple[list[Tensor], int]:
    """ENorm: t = argmin_t Σ_l ω_l ‖W̃_l(t)‖² by block-coordinate closed-form updates; (t, iterations)."""
    layers = mlp.unflatten(theta)
    omega = list(omega) if omega is not None else [1.0] * mlp.n_layers
    ones = theta.new_ones
    ts = [ones(h) for h in mlp.hidden]
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 (the count is used after the loop)
        worst = 0.0
        for li in range(len(ts)):
            w, b = layers[li]
            t_prev = ts[li - 1] if li > 0 else ones(mlp.widths[0])
            t_next = ts[li + 1] if li + 1 < len(ts) else ones(mlp.widths[-1])
            a = _in_sq(w, b, t_prev, ts[li])
            c = _out_sq(layers[li + 1][0], t_next, ts[li])
            s = torch.where(
                (a > 0) & (c > 0),
                (omega[li + 1] * c / (omega[li] * torch.where(a > 0, a, ones(a.shape)))).clamp_min(1e-300) ** 0.25,
                torch.where(c > 0, c.sqrt(), torch.where(a > 0, 1.0 / a.clamp_min(1e-300).sqrt(), ones(a.shape))),
            )
            ts[li] = ts[li] * s
            worst = max(worst, float((s - 1).abs().max()))
        if worst < rtol:
            break
    return ts, it


def canonical_scales(mlp: MLP, theta: Tensor, family: str = "A", gamma: float = 0.5) -> list[Tensor]:
    """Neuron scales t(θ) of the chosen canonicalizer (family A at γ, or ENorm family B)."""
    if family == "A":
        t0 = input_normal_scales(mlp, theta)
        t1 = output_normal_scales(mlp, theta)
        return [a ** (1 - gamma) * b**gamma for a, b in zip(t0, t1, strict=False)]
    if family == "B":
        return enorm_scales(mlp, theta)[0]
    raise ValueError(f"unknown canonicalizer family {family!r}")


def canonical_d(mlp: MLP, theta: Tensor, family: str = "A", gamma: float = 0.5) -> Tensor:
    """D(θ) (P,) per parameter, with c(θ) = D(θ)θ and D(Sθ) = D(θ)S⁻¹."""
    return neuron_to_param_scale(mlp, canonical_scales(mlp, theta, family, gamma))


def canonicalize(mlp: MLP, theta: Tensor, family: str = "A", gamma: float = 0.5) -> Tensor:
    """c(θ) = D(θ)θ, the canonical representative of θ's scale orbit."""
    return canonical_d(mlp, theta, family, gamma) * theta
