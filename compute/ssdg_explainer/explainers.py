"""Explainers: PGExplainer-style edge-mask network, ProxyExplainer, SSDG modules, MixupExplainer, GNNExplainer,
gradient saliency and random/degree floors — all on dense fixed-size graphs (B, N, N).

Edge mask (PGExplainer, spec §2): ω_uv = MLP([h_u ‖ h_v]), symmetrised (ω_uv = ω_vu), binary-concrete
m = σ((log ε − log(1 − ε) + ω)/T) with symmetric ε ~ U(0, 1) while training, m = σ(ω) at evaluation,
T(e) = T₀·(T₁/T₀)^{e/E}.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from compute.ssdg_explainer.gnn import GCN, DenseGCNLayer, gcn_norm


def temperature(epoch: int, epochs: int, t0: float, t1: float) -> float:
    """T(e) = T₀·(T₁/T₀)^{e/E}."""
    return t0 * (t1 / t0) ** (epoch / max(epochs, 1))


def symmetric_uniform(shape: torch.Size, gen: torch.Generator | None = None) -> torch.Tensor:
    """ε ~ U(0, 1) with ε_uv = ε_vu (one draw per undirected pair)."""
    u = torch.rand(shape, generator=gen)
    u = torch.triu(u, 1)
    return (u + u.transpose(-1, -2)).clamp(1e-6, 1 - 1e-6)


def concrete_mask(omega: torch.Tensor, A: torch.Tensor, T: float, training: bool, gen=None) -> torch.Tensor:
    """m = σ((log ε − log(1−ε) + ω)/T) (training) or σ(ω) (evaluation), zero off the edges of A."""
    if training:
        eps = symmetric_uniform(omega.shape, gen)
        m = torch.sigmoid((torch.log(eps) - torch.log(1 - eps) + omega) / T)
    else:
        m = torch.sigmoid(omega)
    return m * A


def mask_entropy(m: torch.Tensor, A: torch.Tensor) -> torch.Tensor:
    """Mean binary entropy H(m′) over existing edges, m′ = 0.98m + 0.01 (released code)."""
    p = 0.98 * m + 0.01
    H = -(p * torch.log(p) + (1 - p) * torch.log(1 - p))
    return (H * A).sum() / A.sum().clamp(min=1)


def pair_features(H: torch.Tensor, extra: torch.Tensor | None = None) -> torch.Tensor:
    """[h_u ‖ h_v (‖ extra_uv)] for every ordered pair: (B, N, N, 2d(+e))."""
    B, N, d = H.shape
    Hu = H.unsqueeze(2).expand(B, N, N, d)
    Hv = H.unsqueeze(1).expand(B, N, N, d)
    parts = [Hu, Hv] + ([extra] if extra is not None else [])
    return torch.cat(parts, dim=-1)


def pair_hidden(lin: nn.Linear, U: torch.Tensor, V: torch.Tensor, T: torch.Tensor | None = None) -> torch.Tensor:
    """lin([U_u ‖ V_v (‖ T)]) for every ordered pair (u, v) without materialising the concatenation:
    the first layer of an MLP on pair features is W_u U_u + W_v V_v (+ W_t T) + b.  U, V: (B, N, d); T: (B, e)."""
    d = U.shape[-1]
    W = lin.weight
    zu = U @ W[:, :d].T
    zv = V @ W[:, d : d + V.shape[-1]].T
    z = zu.unsqueeze(2) + zv.unsqueeze(1) + lin.bias
    if T is not None:
        z = z + (T @ W[:, d + V.shape[-1] :].T)[:, None, None, :]
    return z


class EdgeMaskNet(nn.Module):
    """ω = MLP([h_u ‖ h_v]) (graph tasks) or MLP([h_u ‖ h_v ‖ h_target]) (node tasks, target = node 0),
    symmetrised: ω ← (ω + ωᵀ)/2."""

    def __init__(self, d: int, hidden: int = 64, with_target: bool = False) -> None:
        super().__init__()
        self.with_target = with_target
        self.mlp = nn.Sequential(nn.Linear((3 if with_target else 2) * d, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, H: torch.Tensor) -> torch.Tensor:
        z = pair_hidden(self.mlp[0], H, H, H[:, 0] if self.with_target else None)
        w = self.mlp[2](torch.relu(z)).squeeze(-1)
        return 0.5 * (w + w.transpose(-1, -2))


class BoundaryNet(nn.Module):
    """SSDG (b), design choice: Δω = MLP([h_u ‖ s_u ‖ h_v ‖ s_v]) added to ω on boundary edges B.

    B = edges with exactly one endpoint touched by an explanation edge (m > 0.5); s_u = max_{e∋u} m_e.
    """

    def __init__(self, d: int, hidden: int = 32) -> None:
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(2 * d + 2, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        nn.init.zeros_(self.mlp[-1].weight)
        nn.init.zeros_(self.mlp[-1].bias)

    def forward(self, H: torch.Tensor, m0: torch.Tensor, A: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        s = m0.amax(-1)  # (B, N) node scores
        Hs = torch.cat([H, s.unsqueeze(-1)], dim=-1)
        d = self.mlp[2](torch.relu(pair_hidden(self.mlp[0], Hs, Hs))).squeeze(-1)
        d = 0.5 * (d + d.transpose(-1, -2))
        return d * boundary_edges(m0, A), s


def boundary_edges(m: torch.Tensor, A: torch.Tensor) -> torch.Tensor:
    """B_uv = A_uv · 1[t_u ≠ t_v], t_u = 1[u touches an edge with m > 0.5]."""
    t = ((m > 0.5).float() * A).amax(-1)
    return A * (t.unsqueeze(2) - t.unsqueeze(1)).abs()


def boundary_loss(m: torch.Tensor, A: torch.Tensor) -> torch.Tensor:
    """L_bnd = Σ_uv A_uv (s_u − s_v)² / Σ A  +  mean_{B} H(m)  with s_u = max_{e∋u} m_e (SSDG (b), design choice)."""
    s = m.amax(-1)
    conn = (A * (s.unsqueeze(2) - s.unsqueeze(1)) ** 2).sum() / A.sum().clamp(min=1)
    Bd = boundary_edges(m.detach(), A)
    return conn + (mask_entropy(m, Bd) if Bd.sum() > 0 else m.sum() * 0)


def info_nce(anchor: torch.Tensor, positive: torch.Tensor, negatives: torch.Tensor, tau: float = 0.5) -> torch.Tensor:
    """L = −log[exp(sim(a, p)/τ) / (exp(sim(a, p)/τ) + Σ_j exp(sim(a, z_j)/τ))], cosine sim (SSDG (c)).

    anchor, positive: (d,);  negatives: (K−1, d).  Equal similarities to all K candidates give log K.
    """
    cands = torch.cat([positive.unsqueeze(0), negatives], dim=0)
    sims = F.cosine_similarity(anchor.unsqueeze(0), cands, dim=-1) / tau
    return -(sims[0] - torch.logsumexp(sims, dim=0))


class ProxyGenerator(nn.Module):
    """ProxyExplainer's variational graph autoencoder (dense): 3 GCN layers → node latents (μ, log σ²) →
    pooled [max ‖ mean] → MLP decoder → symmetric N×N edge probabilities with zero diagonal.

    ``n_classes > 0`` makes it the SSDG (a) semantic-conditioned generator: the one-hot ŷ joins the decoder input.
    """

    def __init__(self, in_dim: int, N: int, hidden: int = 32, latent: int = 16, n_classes: int = 0) -> None:
        super().__init__()
        self.enc = nn.ModuleList([DenseGCNLayer(in_dim, hidden), DenseGCNLayer(hidden, hidden)])
        self.mu = DenseGCNLayer(hidden, latent)
        self.logvar = DenseGCNLayer(hidden, latent)
        self.dec = nn.Sequential(nn.Linear(2 * latent + n_classes, 128), nn.ReLU(), nn.Linear(128, N * N))
        self.N, self.n_classes = N, n_classes

    def forward(
        self, X: torch.Tensor, W: torch.Tensor, beta: float, y_onehot: torch.Tensor | None = None, gen=None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Return (Â (B, N, N), KL).  z = μ + β·1e-2·ε·σ (β = 0: deterministic)."""
        An = gcn_norm(W)
        H = X
        for layer in self.enc:
            H = torch.relu(layer(H, An))
        mu, logvar = self.mu(H, An), self.logvar(H, An).clamp(-10, 10)
        z = mu
        if beta > 0:
            z = mu + beta * 1e-2 * torch.randn(mu.shape, generator=gen) * torch.exp(0.5 * logvar)
        g = torch.cat([z.amax(1), z.mean(1)], dim=-1)
        if self.n_classes:
            g = torch.cat([g, y_onehot], dim=-1)
        logits = self.dec(g).view(-1, self.N, self.N)
        logits = 0.5 * (logits + logits.transpose(-1, -2))
        P = torch.sigmoid(logits) * (1 - torch.eye(self.N))
        kl = -0.5 * torch.mean(1 + logvar - mu**2 - logvar.exp())
        return P, kl


def generator_loss(
    A_hat: torch.Tensor, A_M: torch.Tensor, A: torch.Tensor, m: torch.Tensor, kl: torch.Tensor
) -> torch.Tensor:
    """Weighted BCE(Â, A) with pos_weight (N² − |E|)/|E|  + 0.1·KL  + MSE(Â_M, m) on existing edges."""
    N = A.shape[-1]
    off = 1 - torch.eye(N)
    n_e = A.sum((1, 2), keepdim=True).clamp(min=1)
    pos_w = (N * N - n_e) / n_e
    p = A_hat.clamp(1e-6, 1 - 1e-6)
    bce = -(pos_w * A * torch.log(p) + (1 - A) * torch.log(1 - p)) * off
    bce = bce.sum((1, 2)) / (pos_w.squeeze() * n_e.squeeze() + (N * N - N - n_e.squeeze()))
    mse = ((A_M - m) ** 2 * A).sum() / A.sum().clamp(min=1)
    return bce.mean() + 0.1 * kl + mse


@dataclass
class AmortizedConfig:
    """Hyper-parameters of the amortised explainers (ProxyExplainer code defaults; SSDG λ's are design choices)."""

    method: str = "ssdg"  # pgexplainer | mixup | proxy | ssdg
    epochs: int = 30
    lr: float = 0.003
    c_size: float = 0.05
    c_ent: float = 1.0
    t0: float = 5.0
    t1: float = 2.0
    batch_size: int = 64
    gen_steps: int = 10  # generator steps per explainer step; the last passes gradient to the explainer
    gen_lr: float = 0.003
    semantic: bool = True  # SSDG (a)
    boundary: bool = True  # SSDG (b)
    contrastive: bool = True  # SSDG (c)
    lam_g: float = 1.0
    lam_s: float = 0.1
    lam_c: float = 0.1
    lam_b: float = 0.05
    tau: float = 0.5
    # Complement branch: "paper" = G(A⊙(1−m)) may restore any edge of G (released-code construction);
    # "detached" = its input uses a stop-gradient on m (CE cannot reward low m through the complement);
    # "no_restore" = its output is kept off the edges of G, so G's edges reach the proxy only through Â_M
    # (design choices, see docs).
    complement: str = "paper"


class AmortizedExplainer(nn.Module):
    """Edge-mask network (+ generator, + boundary net) trained on a set of graphs; explains in one forward pass."""

    def __init__(
        self, model: GCN, in_dim: int, N: int, cfg: AmortizedConfig, n_classes: int = 2, seed: int = 0
    ) -> None:
        super().__init__()
        torch.manual_seed(seed)  # parameter initialisation is part of the seeded explainer
        self.model, self.cfg = model, cfg
        self.mask_net = EdgeMaskNet(model.hidden, with_target=getattr(model, "node_task", False))
        uses_gen = cfg.method in ("proxy", "ssdg")
        ssdg = cfg.method == "ssdg"
        self.generator = (
            ProxyGenerator(in_dim, N, n_classes=n_classes if ssdg and cfg.semantic else 0) if uses_gen else None
        )
        self.boundary = BoundaryNet(model.hidden) if ssdg and cfg.boundary else None
        self.n_classes = n_classes

    def masks(self, X: torch.Tensor, A: torch.Tensor, T: float = 1.0, training: bool = False, gen=None):
        """Edge masks m (B, N, N); with the boundary network, ω ← ω + Δω on the boundary of σ(ω) > 0.5."""
        H = self.model.node_embed(X, A).detach()
        omega = self.mask_net(H)
        if self.boundary is not None:
            d_omega, _ = self.boundary(H, (torch.sigmoid(omega) * A).detach(), A)
            omega = omega + d_omega
        return concrete_mask(omega, A, T, training, gen)

    def proxy(self, X, A, m, y_hat, gen=None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The proxy the GNN sees, Â_M and the KL term: see ``proxy_parts``."""
        seen, _, A_M, kl = self.proxy_parts(X, A, m, y_hat, gen)
        return seen, A_M, kl

    def proxy_parts(self, X, A, m, y_hat, gen=None):
        """Â = max(Â_M, Â_{1−M}), Â_M = G(A⊙m, β=0), Â_{1−M} = G(A⊙(1−m), β=1).

        Returns (Â seen by the GNN, Â for the generator loss, Â_M, KL).  ``cfg.complement``:
        "paper" — both are Â (released-code construction);  "detached" — the complement's input uses m.detach();
        "no_restore" — the generator may add edges only where G has none: the GNN sees A⊙m + (1 − A)⊙Â, so the
        edges of G reach the proxy only through the mask (the generator loss still uses the full Â)."""
        oh = F.one_hot(y_hat, self.n_classes).float() if self.generator.n_classes else None
        A_M, kl1 = self.generator(X, A * m, 0.0, oh, gen)
        mode = self.cfg.complement
        if mode not in ("paper", "detached", "no_restore"):
            raise ValueError(f"unknown complement mode {mode!r}")
        mc = m if mode == "paper" else m.detach()
        A_C, kl2 = self.generator(X, A * (1 - mc) * A, 1.0, oh, gen)
        full = torch.maximum(A_M, A_C)
        seen = A * m + (1 - A) * full if mode == "no_restore" else full
        return seen, full, A_M, kl1 + kl2

    def fit(self, X: torch.Tensor, A: torch.Tensor, seed: int = 0, on_step: Callable | None = None) -> None:
        """Train on the graphs to explain (the PGExplainer/ProxyExplainer protocol); targets are ŷ = f(G)."""
        cfg = self.cfg
        torch.manual_seed(seed)
        gen = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            y_hat = self.model(X, A).argmax(-1)
            phi_G = self.model.graph_embed(X, A)
        params = list(self.mask_net.parameters()) + (list(self.boundary.parameters()) if self.boundary else [])
        opt = torch.optim.Adam(params, lr=cfg.lr)
        gopt = torch.optim.Adam(self.generator.parameters(), lr=cfg.gen_lr) if self.generator else None
        n = X.shape[0]
        step = 0
        for ep in range(cfg.epochs):
            T = temperature(ep, cfg.epochs, cfg.t0, cfg.t1)
            order = torch.randperm(n, generator=gen)
            for i in range(0, n, cfg.batch_size):
                b = order[i : i + cfg.batch_size]
                Xb, Ab, yb = X[b], A[b], y_hat[b]
                logs = self._step(Xb, Ab, yb, phi_G[b], T, opt, gopt, gen)
                step += 1
                if on_step is not None:
                    on_step(step, ep, logs)

    def _step(self, Xb, Ab, yb, phib, T, opt, gopt, gen) -> dict[str, float]:
        cfg = self.cfg
        logs: dict[str, float] = {}
        m = self.masks(Xb, Ab, T, training=True, gen=gen)
        size = cfg.c_size * m.triu(1).sum() / Xb.shape[0]
        ent = cfg.c_ent * mask_entropy(m, Ab)
        if cfg.method == "pgexplainer":
            ce = F.cross_entropy(self.model(Xb, Ab * m), yb)
            loss = ce + size + ent
        elif cfg.method == "mixup":
            ce = F.cross_entropy(self.model(*mixup_graphs(Xb, Ab, m, gen)), yb)
            loss = ce + size + ent
        else:
            for _ in range(cfg.gen_steps - 1):  # generator warm steps on detached masks
                _, A_full, A_M, kl = self.proxy_parts(Xb, Ab, m.detach(), yb, gen)
                gl = generator_loss(A_full, A_M, Ab, m.detach(), kl)
                gopt.zero_grad()
                gl.backward()
                gopt.step()
            A_hat, A_full, A_M, kl = self.proxy_parts(Xb, Ab, m, yb, gen)
            gl = generator_loss(A_full, A_M, Ab, m, kl)
            ce = F.cross_entropy(self.model(Xb, A_hat), yb)
            loss = ce + size + ent + cfg.lam_g * gl
            logs["loss/generator"] = float(gl.detach())
            if cfg.method == "ssdg":
                phi_hat = self.model.graph_embed(Xb, A_hat)
                if cfg.semantic:
                    sem = ((phi_hat - phib) ** 2).mean()
                    loss = loss + cfg.lam_s * sem
                    logs["loss/semantic"] = float(sem.detach())
                if cfg.contrastive:
                    con = contrastive_loss(phi_hat, phib, yb, cfg.tau)
                    loss = loss + cfg.lam_c * con
                    logs["loss/contrastive"] = float(con.detach())
                if cfg.boundary:
                    bnd = boundary_loss(m, Ab)
                    loss = loss + cfg.lam_b * bnd
                    logs["loss/boundary"] = float(bnd.detach())
            gopt.zero_grad()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if gopt is not None:
            gopt.step()
        logs.update({"loss/explainer": float(loss.detach()), "loss/ce": float(ce.detach())})
        return logs

    @torch.no_grad()
    def explain(self, X: torch.Tensor, A: torch.Tensor) -> torch.Tensor:
        """Evaluation masks m = σ(ω) (B, N, N)."""
        return self.masks(X, A, training=False)


def contrastive_loss(phi_hat: torch.Tensor, phi: torch.Tensor, y_hat: torch.Tensor, tau: float) -> torch.Tensor:
    """Mean InfoNCE: anchor φ(Ĝ_i), positive φ(G_i), negatives φ(Ĝ_j) of graphs with ŷ_j ≠ ŷ_i."""
    losses = []
    for i in range(phi_hat.shape[0]):
        neg = phi_hat[y_hat != y_hat[i]]
        if len(neg):
            losses.append(info_nce(phi_hat[i], phi[i], neg, tau))
    return torch.stack(losses).mean() if losses else phi_hat.sum() * 0


def mixup_graphs(X: torch.Tensor, A: torch.Tensor, m: torch.Tensor, gen=None) -> tuple[torch.Tensor, torch.Tensor]:
    """MixupExplainer (re-implemented): G_i's explanation A_i⊙m_i joined to G_j's non-explanation A_j⊙(1 − m_j)
    (j a random other graph of the batch) by one random cross edge; a (B, 2N, 2N) block graph."""
    B, N, _ = A.shape
    j = (torch.arange(B) + torch.randint(1, max(B, 2), (1,), generator=gen)) % B
    W = torch.zeros(B, 2 * N, 2 * N)
    W[:, :N, :N] = A * m
    W[:, N:, N:] = A[j] * (1 - m[j]) * A[j]
    u = torch.randint(N, (B,), generator=gen)
    v = torch.randint(N, (B,), generator=gen) + N
    W[torch.arange(B), u, v] = 1.0
    W[torch.arange(B), v, u] = 1.0
    return torch.cat([X, X[j]], dim=1), W


def gnn_explainer(
    model: GCN,
    X: torch.Tensor,
    A: torch.Tensor,
    epochs: int = 100,
    lr: float = 0.01,
    c_size: float = 0.005,
    c_ent: float = 1.0,
    seed: int = 0,
) -> torch.Tensor:
    """GNNExplainer (PyG defaults): per-graph free mask logits, loss CE(f(A⊙σ(ω)), ŷ) + c_size Σm + c_ent H(m).

    All graphs are optimised together, but each graph's loss touches only its own parameters and Adam is
    per-parameter, so this equals per-instance optimisation.
    """
    torch.manual_seed(seed)
    with torch.no_grad():
        y_hat = model(X, A).argmax(-1)
    N = A.shape[-1]
    std = nn.init.calculate_gain("relu") * math.sqrt(2.0 / (2 * N))
    omega = (torch.randn(A.shape) * std).requires_grad_(True)
    opt = torch.optim.Adam([omega], lr=lr)
    for _ in range(epochs):
        w = 0.5 * (omega + omega.transpose(-1, -2))
        m = torch.sigmoid(w) * A
        ce = F.cross_entropy(model(X, A * m), y_hat, reduction="sum")
        p = 0.98 * m + 0.01
        H = (-(p * torch.log(p) + (1 - p) * torch.log(1 - p)) * A).sum((1, 2)) / A.sum((1, 2)).clamp(min=1)
        loss = ce + c_size * m.triu(1).sum() + c_ent * H.sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        return torch.sigmoid(0.5 * (omega + omega.transpose(-1, -2))) * A


def grad_saliency(model: GCN, X: torch.Tensor, A: torch.Tensor) -> torch.Tensor:
    """|∂ logit_ŷ / ∂A_uv| + |∂ logit_ŷ / ∂A_vu| on existing edges."""
    W = A.clone().requires_grad_(True)
    out = model(X, W)
    out.gather(1, out.argmax(-1, keepdim=True)).sum().backward()
    g = W.grad.abs()
    return (g + g.transpose(-1, -2)) * A


def random_mask(A: torch.Tensor, seed: int = 0) -> torch.Tensor:
    """Sanity floor: symmetric U(0, 1) scores."""
    return symmetric_uniform(A.shape, torch.Generator().manual_seed(seed)) * A


def degree_mask(A: torch.Tensor) -> torch.Tensor:
    """Sanity floor: score = −(deg_u + deg_v) (edges between low-degree nodes first)."""
    d = A.sum(-1)
    return (2 * A.shape[-1] - (d.unsqueeze(2) + d.unsqueeze(1))) * A
