"""ReLU MLPs on a flat parameter vector, MAP training and the positive-rescaling orbit.

Parameter order is that of ``nn.Sequential(Linear, ReLU, …, Linear).parameters()`` —
W_1, b_1, W_2, b_2, … with W_l of shape (out, in) — so the flat vector lines up with
``parameters_to_vector`` and with laplace-torch's per-parameter ``prior_precision``.

Orbit (Dinh et al. 2017; paper §2): for hidden neuron i of layer l and s_i > 0,
W_l[i,:] ← s_i W_l[i,:], b_l[i] ← s_i b_l[i], W_{l+1}[:,i] ← W_{l+1}[:,i] / s_i; in vector form θ′ = Sθ
with S diagonal and f(x; Sθ) = f(x; θ).  The output layer is never rescaled.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor, nn

DTYPE = torch.float64


@dataclass(frozen=True)
class MLP:
    """Layer widths [d_in, h_1, …, h_{L-1}, d_out] of a fully connected ReLU network."""

    widths: tuple[int, ...]

    @property
    def n_layers(self) -> int:
        return len(self.widths) - 1

    @property
    def hidden(self) -> tuple[int, ...]:
        return self.widths[1:-1]

    @property
    def n_params(self) -> int:
        return sum((a + 1) * b for a, b in zip(self.widths[:-1], self.widths[1:], strict=False))

    def layer_slices(self) -> list[tuple[slice, slice]]:
        """(W slice, b slice) of each layer in the flat vector."""
        out, k = [], 0
        for a, b in zip(self.widths[:-1], self.widths[1:], strict=False):
            out.append((slice(k, k + a * b), slice(k + a * b, k + a * b + b)))
            k += (a + 1) * b
        return out

    def groups(self) -> list[slice]:
        """One contiguous slice per layer (weights and bias together): the layer-wise prior groups."""
        return [slice(w.start, b.stop) for w, b in self.layer_slices()]

    def unflatten(self, theta: Tensor) -> list[tuple[Tensor, Tensor]]:
        """θ (P,) → [(W_l (out,in), b_l (out,))]."""
        layers = []
        for (ws, bs), a, b in zip(self.layer_slices(), self.widths[:-1], self.widths[1:], strict=False):
            layers.append((theta[ws].reshape(b, a), theta[bs]))
        return layers

    def forward(self, theta: Tensor, x: Tensor) -> Tensor:
        """f(x; θ): x (N, d_in) → (N, d_out)."""
        h = x
        layers = self.unflatten(theta)
        for i, (w, b) in enumerate(layers):
            h = h @ w.T + b
            if i < len(layers) - 1:
                h = torch.relu(h)
        return h

    def torch_module(self, theta: Tensor) -> nn.Sequential:
        """An ``nn.Sequential`` holding θ (used for laplace-torch)."""
        mods: list[nn.Module] = []
        for i, (a, b) in enumerate(zip(self.widths[:-1], self.widths[1:], strict=False)):
            mods.append(nn.Linear(a, b))
            if i < self.n_layers - 1:
                mods.append(nn.ReLU())
        net = nn.Sequential(*mods).to(dtype=theta.dtype, device=theta.device)
        nn.utils.vector_to_parameters(theta.detach().clone(), net.parameters())
        return net


def parse_widths(d_in: int, hidden: str, d_out: int) -> MLP:
    """'32-32' → MLP((d_in, 32, 32, d_out)); '' or '0' → a linear model."""
    hs = [int(h) for h in hidden.replace(",", "-").split("-") if h.strip() and int(h) > 0]
    return MLP((d_in, *hs, d_out))


def init_params(mlp: MLP, generator: torch.Generator, device: str = "cpu") -> Tensor:
    """PyTorch's default ``nn.Linear`` initialisation U(±1/√fan_in) for weights and biases."""
    parts = []
    for a, b in zip(mlp.widths[:-1], mlp.widths[1:], strict=False):
        bound = 1.0 / a**0.5
        parts.append((torch.rand(a * b + b, generator=generator, dtype=DTYPE) * 2 - 1) * bound)
    return torch.cat(parts).to(device)


def neuron_to_param_scale(mlp: MLP, t: list[Tensor]) -> Tensor:
    """Per-parameter factor of the orbit action for neuron scales t_l (one tensor per hidden layer).

    W_l[i,j] ↦ t_l[i]/t_{l-1}[j] · W_l[i,j] and b_l[i] ↦ t_l[i] · b_l[i] with t_0 = t_L = 1, so the
    map t ↦ S(t) is a group homomorphism: S(t·u) = S(t)S(u).
    """
    if len(t) != len(mlp.hidden):
        raise ValueError(f"need {len(mlp.hidden)} hidden scale vectors, got {len(t)}")
    device = t[0].device if t else "cpu"
    ones_in = torch.ones(mlp.widths[0], dtype=DTYPE, device=device)
    ones_out = torch.ones(mlp.widths[-1], dtype=DTYPE, device=device)
    scales = [ones_in, *t, ones_out]
    parts = []
    for layer in range(mlp.n_layers):
        s_in, s_out = scales[layer], scales[layer + 1]
        parts.append((s_out[:, None] / s_in[None, :]).reshape(-1))
        parts.append(s_out)
    return torch.cat(parts)


def random_neuron_scales(mlp: MLP, log10_range: float, generator: torch.Generator, device: str = "cpu") -> list[Tensor]:
    """s_i = 10^u, u ~ U(−log10_range, +log10_range), independently for every hidden neuron."""
    return [
        (10.0 ** ((torch.rand(h, generator=generator, dtype=DTYPE) * 2 - 1) * log10_range)).to(device)
        for h in mlp.hidden
    ]


def train_map(
    mlp: MLP,
    theta0: Tensor,
    x: Tensor,
    y: Tensor,
    likelihood: str,
    steps: int,
    lr: float = 1e-2,
    weight_decay: float = 1e-4,
    callback: Callable[[int, float], bool] | None = None,
) -> Tensor:
    """MAP by full-batch Adam on mean MSE (regression) or mean CE (classification) + weight_decay·‖θ‖².

    ``callback(step, loss)`` is called every 50 steps (progress/streaming); it may return True to stop.
    """
    theta = theta0.detach().clone().requires_grad_(True)
    opt = torch.optim.Adam([theta], lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(steps, 1), eta_min=lr / 20)
    for step in range(steps):
        opt.zero_grad()
        f = mlp.forward(theta, x)
        if likelihood == "regression":
            data_loss = ((f - y) ** 2).mean()
        else:
            data_loss = nn.functional.cross_entropy(f, y)
        loss = data_loss + weight_decay * (theta**2).sum()
        loss.backward()
        opt.step()
        sched.step()
        report = callback is not None and (step % 50 == 0 or step == steps - 1)
        if report and callback(step, float(data_loss.detach())):
            break
    return theta.detach()
