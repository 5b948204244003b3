"""Test-time search: Best-of-N, LoTTS (localize → masked refine → verifier, DFS), and its ablations.

Every method draws its initial candidates from the same seeded noises (common random numbers), so
Best-of-N with N candidates and LoTTS with k ≤ N candidates share the first k candidates exactly.
NFE is read from the single counter inside the UNet wrapper (one NFE = one UNet pass on one image;
a CFG step costs 2; localization costs 2·n_t conditional passes).

DFS (design choice, the paper's search is unpublished): each node is refined with b seeds; a child is
expanded one level deeper (up to D) only when its verifier score beats its parent's; the method returns
the best node (roots included) by the selection verifier.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from .data import Attributes
from .diffusion import Sampler
from .localize import localize, prompt_ids, random_mask
from .verifiers import score

METHODS = ["lotts", "resample", "random_mask"]


def noise_gen(seed: int, *keys: int) -> torch.Generator:
    """A generator keyed by (seed, prompt, candidate, …) so every method sees the same noises."""
    g = torch.Generator()
    g.manual_seed(int(np.random.SeedSequence([seed, *keys]).generate_state(1)[0]))
    return g


@dataclass
class Node:
    x: torch.Tensor  # (3, S, S)
    score: float
    depth: int
    nfe: float  # NFE spent to create this node (localization + refinement; sampling for roots)
    mask: torch.Tensor | None = None  # the mask it was refined with
    pre_holistic: torch.Tensor | None = None
    children: list[Node] = field(default_factory=list)


@dataclass
class Tree:
    """One initial candidate and everything grown from it."""

    root: Node

    def nodes(self) -> list[Node]:
        out, stack = [], [self.root]
        while stack:
            n = stack.pop()
            out.append(n)
            stack.extend(n.children)
        return out

    def nfe(self) -> float:
        return sum(n.nfe for n in self.nodes())

    def best(self) -> Node:
        return max(self.nodes(), key=lambda n: n.score)


@torch.no_grad()
def sample_candidates(
    sampler: Sampler, attrs: list[Attributes], n: int, seed: int, select_net: torch.nn.Module
) -> tuple[torch.Tensor, torch.Tensor, float]:
    """x (P, n, 3, S, S), selection scores (P, n) and measured NFE per candidate for every prompt."""
    size = sampler.net.unet.cfg.size
    noise = torch.stack(
        [torch.randn(3, size, size, generator=noise_gen(seed, p, j)) for p in range(len(attrs)) for j in range(n)]
    )
    rep = [a for a in attrs for _ in range(n)]
    ids, uncond = prompt_ids(rep, "high"), prompt_ids([None] * len(rep), None)  # type: ignore[list-item]
    before = sampler.net.nfe
    x = sampler.sample(noise, ids, uncond)
    per = (sampler.net.nfe - before) / len(rep)
    s = score(select_net, x, rep)
    return x.view(len(attrs), n, *x.shape[1:]), s.view(len(attrs), n), per


@dataclass
class RefineSpec:
    method: str  # "lotts" | "resample" | "random_mask"
    branch: int = 2
    depth: int = 1
    r: float = 0.2
    t0: int = 500
    h_hol: int = 2
    lam: float = 0.3
    loc_t: tuple[float, ...] = (0.2, 0.4)
    layers: str = "down"
    dilate: int = 0
    propagate: bool = True  # step ②


@torch.no_grad()
def grow(
    sampler: Sampler,
    roots: list[Node],
    attrs: list[Attributes],
    spec: RefineSpec,
    seed: int,
    keys: list[tuple[int, int]],
    select_net: torch.nn.Module,
) -> list[Tree]:
    """Expand every root (prompt p, candidate j) by the DFS rule, batching all frontier nodes per level."""
    net = sampler.net
    trees = [Tree(r) for r in roots]
    frontier = [(i, r, (0,)) for i, r in enumerate(roots)]  # (tree index, node, path)
    size = net.unet.cfg.size
    uncond_one = prompt_ids([None], None)  # type: ignore[list-item]
    for level in range(1, spec.depth + 1):
        if not frontier:
            break
        x = torch.stack([n.x for _, n, _ in frontier])
        fa = [attrs[i] for i, _, _ in frontier]
        B = len(frontier)
        # ---- localization (LoTTS pays 2·n_t NFE per node; the ablations need none) --------------
        before = net.nfe
        if spec.method == "lotts":
            gen = noise_gen(seed, 7, level, len(frontier), *frontier[0][2])
            masks = localize(net, x, fa, spec.r, spec.lam, spec.loc_t, gen, spec.layers, spec.dilate, spec.propagate)[0]
        elif spec.method == "resample":
            masks = torch.ones(B, 1, size, size)
        else:
            n_cells = (size // 2) ** 2
            masks = torch.cat(
                [
                    random_mask(1, n_cells, spec.r, size, _node_gen(seed, keys[i], path, 2), spec.dilate)
                    for i, _, path in frontier
                ]
            )
        loc_cost = (net.nfe - before) / B
        # ---- b refinements per node, all in one batch ------------------------------------------------
        rep = [b for b in range(B) for _ in range(spec.branch)]
        eps = torch.stack(
            [
                torch.randn(3, size, size, generator=_node_gen(seed, keys[frontier[b][0]], frontier[b][2], 3, c))
                for b in range(B)
                for c in range(spec.branch)
            ]
        )
        eps_h = torch.stack(
            [
                torch.randn(3, size, size, generator=_node_gen(seed, keys[frontier[b][0]], frontier[b][2], 4, c))
                for b in range(B)
                for c in range(spec.branch)
            ]
        )
        ids = prompt_ids([fa[b] for b in rep], "high")
        before = net.nfe
        out, pre = sampler.refine(
            x[rep],
            masks[rep],
            ids,
            uncond_one.expand(len(rep), -1),
            spec.t0,
            spec.h_hol,
            eps,
            eps_h,
            return_pre_holistic=True,
        )
        ref_cost = (net.nfe - before) / len(rep)
        s = score(select_net, out, [fa[b] for b in rep])
        nxt = []
        for c, b in enumerate(rep):
            i, parent, path = frontier[b]
            child = Node(
                out[c], float(s[c]), level, ref_cost + (loc_cost if c % spec.branch == 0 else 0.0), masks[b], pre[c]
            )
            parent.children.append(child)
            if child.score > parent.score:
                nxt.append((i, child, (*path, c % spec.branch)))
        frontier = nxt
    return trees


def _node_gen(seed: int, key: tuple[int, int], path: tuple[int, ...], kind: int, child: int = 0) -> torch.Generator:
    return noise_gen(seed, key[0], key[1], kind, child, len(path), *path)
