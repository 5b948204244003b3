"""DDPM schedule, DDIM (η = 0) sampling with classifier-free guidance, and LoTTS masked refinement.

The network predicts v = √ᾱ·ε − √(1−ᾱ)·x₀ (SD2.1-v's parameterization; design choice: a tiny ε-model trained
for minutes on CPU cannot predict ε precisely enough at high noise, where x̂₀ errors are amplified by
√((1−ᾱ)/ᾱ)); the sampler converts to ε̂ and runs the usual ε-form DDIM.

Noise schedule: linear β from 1e-4 to 0.02 over T = 1000 (DDPM); DDIM with "leading"
timesteps t_i = i·T/S (diffusers' default spacing), x̂₀ clipped to [-1, 1] (diffusers' clip_sample).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .model import CountingUNet

T_TRAIN = 1000


def alphas_cumprod(T: int = T_TRAIN) -> torch.Tensor:
    betas = torch.linspace(1e-4, 0.02, T, dtype=torch.float64)
    return torch.cumprod(1.0 - betas, 0).float()


def q_sample(x0: torch.Tensor, t: int, eps: torch.Tensor, ac: torch.Tensor) -> torch.Tensor:
    """x_t = √ᾱ_t·x₀ + √(1 − ᾱ_t)·ε."""
    a = ac[t]
    return a.sqrt() * x0 + (1 - a).sqrt() * eps


def ddim_timesteps(steps: int, T: int = T_TRAIN) -> list[int]:
    """Descending DDIM timesteps [(S−1)·T/S, …, T/S, 0]."""
    ratio = T // steps
    return [i * ratio for i in range(steps)][::-1]


@dataclass
class Sampler:
    """DDIM(η = 0) with CFG: ε = ε_u + w·(ε_c − ε_u); one guided step costs 2 NFE (cond + uncond)."""

    net: CountingUNet
    steps: int = 20
    cfg_scale: float = 3.0

    def __post_init__(self) -> None:
        self.ac = alphas_cumprod().to(next(self.net.parameters()).device)
        self.ts = ddim_timesteps(self.steps)

    @property
    def cfg_factor(self) -> int:
        return 1 if self.cfg_scale == 1.0 else 2

    def eps(self, x: torch.Tensor, t: int, ids: torch.Tensor, uncond: torch.Tensor) -> torch.Tensor:
        """Guided ε̂ at timestep t (the network's v̂ is converted: ε̂ = √(1−ᾱ)·x_t + √ᾱ·v̂)."""
        tt = torch.full((x.shape[0],), t, dtype=torch.long, device=x.device)
        if self.cfg_factor == 1:
            return self.to_eps(self.net(x, tt, ids), x, t)
        e = self.net(torch.cat([x, x]), torch.cat([tt, tt]), torch.cat([ids, uncond]))
        ec, eu = e.chunk(2)
        return self.to_eps(eu + self.cfg_scale * (ec - eu), x, t)

    def to_eps(self, out: torch.Tensor, x: torch.Tensor, t: int) -> torch.Tensor:
        if self.net.unet.cfg.prediction == "eps":
            return out
        a = self.ac[t]
        return (1 - a).sqrt() * x + a.sqrt() * out

    def step(self, x: torch.Tensor, t: int, t_prev: int, eps: torch.Tensor) -> torch.Tensor:
        """Deterministic DDIM update x_t → x_{t_prev} (ᾱ of t_prev < 0 is 1)."""
        a = self.ac[t]
        a_prev = self.ac[t_prev] if t_prev >= 0 else torch.tensor(1.0, device=x.device)
        x0 = ((x - (1 - a).sqrt() * eps) / a.sqrt()).clamp(-1, 1)
        eps = (x - a.sqrt() * x0) / (1 - a).sqrt()  # re-derived after clipping (diffusers does the same)
        return a_prev.sqrt() * x0 + (1 - a_prev).sqrt() * eps

    def prev(self, t: int) -> int:
        return t - T_TRAIN // self.steps

    @torch.no_grad()
    def sample(self, noise: torch.Tensor, ids: torch.Tensor, uncond: torch.Tensor) -> torch.Tensor:
        """Full DDIM trajectory from x_T = noise (cost S·cfg_factor NFE per image)."""
        x = noise
        for t in self.ts:
            x = self.step(x, t, self.prev(t), self.eps(x, t, ids, uncond))
        return x

    def restart_timesteps(self, t0: int) -> list[int]:
        """The DDIM timesteps ≤ t₀ (a restart from t₀ runs exactly these)."""
        return [t for t in self.ts if t <= t0]

    @torch.no_grad()
    def refine(
        self,
        x0: torch.Tensor,
        mask: torch.Tensor,
        ids: torch.Tensor,
        uncond: torch.Tensor,
        t0: int,
        h_hol: int,
        eps: torch.Tensor,
        eps_hol: torch.Tensor | None = None,
        return_pre_holistic: bool = False,
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """LoTTS masked re-noise / re-denoise (spec §2, the three consistency rules).

        Temporal: start at the DDIM timestep t_s ≤ t₀, not at pure noise.  Spatial: the same noise level
        everywhere, x_{t_s} = √ᾱ·x₀ + √(1−ᾱ)·ε over the whole image.  Each step then keeps the known region
        RePaint-style, x_{t−1} = M ⊙ DDIM(x_t) + (1 − M) ⊙ (√ᾱ_{t−1}·x₀ + √(1−ᾱ_{t−1})·ε), with the same ε
        throughout (design choice: one noise shared in and out of the mask and over steps, so M = 1 is an
        exact SDEdit restart) and x₀ itself at the last step.  Holistic: h_hol extra unmasked DDIM steps
        from the h_hol-th-last timestep after re-noising the composite with ``eps_hol`` (design choice).

        mask: (B, 1, S, S) in {0, 1}, 1 = regenerate.  Cost: (len(restart) + h_hol)·cfg_factor NFE.
        """
        ts = self.restart_timesteps(t0)
        x = q_sample(x0, ts[0], eps, self.ac)
        for t in ts:
            tp = self.prev(t)
            x_gen = self.step(x, t, tp, self.eps(x, t, ids, uncond))
            x_known = x0 if tp < 0 else q_sample(x0, tp, eps, self.ac)
            x = mask * x_gen + (1 - mask) * x_known
        pre = x
        if h_hol > 0:
            ts_h = self.ts[-h_hol:]
            if eps_hol is None:
                eps_hol = torch.randn_like(x)
            x = q_sample(x, ts_h[0], eps_hol, self.ac)
            for t in ts_h:
                x = self.step(x, t, self.prev(t), self.eps(x, t, ids, uncond))
        return (x, pre) if return_pre_holistic else x
