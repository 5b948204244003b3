"""Sparse autoencoders: TopK (+AuxK), BatchTopK and JumpReLU, with unit-norm decoder columns.

Shared skeleton (Gao et al. 2024; Bricken et al. 2023):
    p  = W_enc (x − b_dec) + b_enc                  pre-activations, (B, m)
    f  = σ(p)                                       sparse code, σ one of the three below
    x̂  = W_dec f + b_dec                            reconstruction, (B, d); W_dec columns have unit norm

Architectures:
    topk       f = TopK(ReLU(p), k) per row; AuxK reconstructs the residual from the top-k_aux dead latents
    batchtopk  keep the top B·k entries of ReLU(p) across the batch (Bussmann et al. 2024); at inference
               f = p·1[p > θ] with θ an EMA of the smallest kept activation
    jumprelu   f = p·H(p − θ) with loss ‖x − x̂‖² + λ·Σ_i H(p_i − θ_i); θ learned through a straight-through
               estimator with a rectangle kernel of width ε (Rajamanoharan et al. 2024)

Shapes: B batch, d input width, m dictionary size.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

ARCHS = ("topk", "batchtopk", "jumprelu")


def rectangle(u: torch.Tensor) -> torch.Tensor:
    """Rectangle kernel K(u) = 1[|u| < 1/2]."""
    return (u.abs() < 0.5).to(u.dtype)


class _JumpReLU(torch.autograd.Function):
    """y = p·H(p − θ); ∂y/∂p = H(p − θ); ∂y/∂θ ≈ −(θ/ε)·K((p − θ)/ε) (Rajamanoharan et al. 2024, eq. 11)."""

    @staticmethod
    def forward(ctx, p: torch.Tensor, theta: torch.Tensor, eps: float) -> torch.Tensor:  # type: ignore[override]
        ctx.save_for_backward(p, theta)
        ctx.eps = eps
        return p * (p > theta).to(p.dtype)

    @staticmethod
    def backward(ctx, g: torch.Tensor):  # type: ignore[override]
        p, theta = ctx.saved_tensors
        eps = ctx.eps
        gp = g * (p > theta).to(p.dtype)
        gtheta = (g * (-(theta / eps) * rectangle((p - theta) / eps))).sum(0)
        return gp, gtheta, None


class _Step(torch.autograd.Function):
    """H(p − θ); ∂H/∂p = 0; ∂H/∂θ ≈ −(1/ε)·1[|p − θ| < ε/2] (the rectangle-kernel pseudo-derivative)."""

    @staticmethod
    def forward(ctx, p: torch.Tensor, theta: torch.Tensor, eps: float) -> torch.Tensor:  # type: ignore[override]
        ctx.save_for_backward(p, theta)
        ctx.eps = eps
        return (p > theta).to(p.dtype)

    @staticmethod
    def backward(ctx, g: torch.Tensor):  # type: ignore[override]
        p, theta = ctx.saved_tensors
        eps = ctx.eps
        gtheta = (g * (-(1.0 / eps) * rectangle((p - theta) / eps))).sum(0)
        return torch.zeros_like(p), gtheta, None


def jumprelu(p: torch.Tensor, theta: torch.Tensor, eps: float) -> torch.Tensor:
    return _JumpReLU.apply(p, theta, eps)


def step(p: torch.Tensor, theta: torch.Tensor, eps: float) -> torch.Tensor:
    return _Step.apply(p, theta, eps)


class SAE(nn.Module):
    """One sparse autoencoder; ``arch`` picks the activation.  Parameters are fp32."""

    def __init__(
        self,
        d: int,
        m: int,
        arch: str = "topk",
        k: int = 8,
        k_aux: int | None = None,
        jump_eps: float = 1e-3,
        theta_init: float = 1e-3,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__()
        if arch not in ARCHS:
            raise ValueError(f"arch must be one of {ARCHS}")
        self.d, self.m, self.arch, self.k = d, m, arch, k
        self.k_aux = k_aux if k_aux is not None else 2 * k  # design choice (spec): k_aux = 2k
        self.jump_eps = jump_eps
        w = torch.randn(d, m, generator=generator)
        w = w / w.norm(dim=0, keepdim=True)
        self.W_dec = nn.Parameter(w)  # (d, m), unit columns
        self.W_enc = nn.Parameter(w.t().clone())  # (m, d), tied init (Gao et al. 2024)
        self.b_enc = nn.Parameter(torch.zeros(m))
        self.b_dec = nn.Parameter(torch.zeros(d))
        self.theta = nn.Parameter(torch.full((m,), theta_init)) if arch == "jumprelu" else None
        # BatchTopK inference threshold: EMA of the smallest kept activation (−1 = not yet set)
        self.register_buffer("batch_threshold", torch.tensor(-1.0))

    # -- forward pieces ----------------------------------------------------------------------
    def pre(self, x: torch.Tensor) -> torch.Tensor:
        """p = W_enc (x − b_dec) + b_enc, (B, m)."""
        return (x - self.b_dec) @ self.W_enc.t() + self.b_enc

    def activate(self, p: torch.Tensor, training: bool = False) -> torch.Tensor:
        """The sparse code f(p), (B, m).  ``training`` selects BatchTopK's batch rule over its threshold."""
        if self.arch == "topk":
            vals, idx = torch.topk(F.relu(p), self.k, dim=-1)
            return torch.zeros_like(p).scatter(-1, idx, vals)
        if self.arch == "batchtopk":
            if training or self.batch_threshold.item() < 0:
                a = F.relu(p).flatten()
                n_keep = min(self.k * p.shape[0], a.numel())
                vals, idx = torch.topk(a, n_keep)
                f = torch.zeros_like(a).scatter(0, idx, vals).view_as(p)
                if training:
                    kept_min = vals[vals > 0].min() if (vals > 0).any() else vals.new_tensor(0.0)
                    with torch.no_grad():
                        t = self.batch_threshold
                        t.copy_(kept_min.detach() if t.item() < 0 else 0.95 * t + 0.05 * kept_min.detach())
                return f
            return p * (p > self.batch_threshold).to(p.dtype)
        assert self.theta is not None
        return jumprelu(p, self.theta, self.jump_eps)

    def decode(self, f: torch.Tensor) -> torch.Tensor:
        return f @ self.W_dec.t() + self.b_dec

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Inference: (x̂, f)."""
        f = self.activate(self.pre(x), training=False)
        return self.decode(f), f

    # -- training loss --------------------------------------------------------------------------
    def loss(
        self, x: torch.Tensor, dead_mask: torch.Tensor | None = None, l0_coeff: float = 0.0, aux_coeff: float = 1 / 32
    ) -> tuple[torch.Tensor, dict[str, float], torch.Tensor]:
        """Training loss, logged parts and the code f.

        topk/batchtopk:  ‖x − x̂‖² + aux_coeff·AuxK, AuxK = ‖e − ê‖²/‖e‖², e = x − x̂ (detached),
                         ê = W_dec TopK_{k_aux}(ReLU(p) on dead latents)  (Gao et al. 2024, §A.2)
        jumprelu:        ‖x − x̂‖² + λ·Σ_i H(p_i − θ_i)
        (‖·‖² summed over d, averaged over the batch).
        """
        p = self.pre(x)
        f = self.activate(p, training=True)
        x_hat = self.decode(f)
        mse = (x - x_hat).pow(2).sum(-1).mean()
        parts = {"mse": float(mse.detach())}
        loss = mse
        if self.arch in ("topk", "batchtopk") and dead_mask is not None and aux_coeff > 0 and bool(dead_mask.any()):
            n_dead = int(dead_mask.sum())
            k_aux = min(self.k_aux, n_dead)
            pd = F.relu(p).masked_fill(~dead_mask, 0.0)
            vals, idx = torch.topk(pd, k_aux, dim=-1)
            f_aux = torch.zeros_like(p).scatter(-1, idx, vals)
            e = (x - x_hat).detach()
            e_hat = f_aux @ self.W_dec.t()
            aux = (e - e_hat).pow(2).sum(-1).mean() / e.pow(2).sum(-1).mean().clamp_min(1e-12)
            loss = loss + aux_coeff * aux
            parts["aux"] = float(aux.detach())
        if self.arch == "jumprelu":
            assert self.theta is not None
            l0 = step(p, self.theta, self.jump_eps).sum(-1).mean()
            loss = loss + l0_coeff * l0
            parts["l0_penalty"] = float(l0.detach())
        return loss, parts, f

    # -- decoder constraint ---------------------------------------------------------------------
    @torch.no_grad()
    def project_decoder_grad(self) -> None:
        """Remove from each decoder column's gradient its component along that column: g_j ← g_j − (g_j·w_j) w_j."""
        g = self.W_dec.grad
        if g is None:
            return
        w = self.W_dec
        g.sub_(w * (g * w).sum(0, keepdim=True))

    @torch.no_grad()
    def normalize_decoder(self) -> None:
        """Renormalize every decoder column to unit norm."""
        self.W_dec.div_(self.W_dec.norm(dim=0, keepdim=True).clamp_min(1e-12))

    @torch.no_grad()
    def clamp_theta(self) -> None:
        if self.theta is not None:
            self.theta.clamp_(min=1e-6)


def lr_at(step_i: int, n_steps: int, lr: float, warmup_frac: float = 0.01, decay_frac: float = 0.2) -> float:
    """Per-step schedule: linear warm-up over the first 1 % of steps, constant, linear decay over the last 20 %."""
    warm = max(1, int(math.ceil(warmup_frac * n_steps)))
    decay_start = int((1 - decay_frac) * n_steps)
    if step_i < warm:
        return lr * (step_i + 1) / warm
    if step_i >= decay_start and n_steps > decay_start:
        return lr * max(0.0, (n_steps - step_i) / (n_steps - decay_start))
    return lr
