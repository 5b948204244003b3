"""The GRPO trainer (spec grpo_core §2 "RL step"): rollouts → old_logp → rewards → group advantages → clipped
loss with plug-in weights/masks → AdamW step → on_step_end, streaming metrics through a reporter.

One step, in the order of the spec:

1. plan and rollout: ``plan_rollouts`` (phase 0, 1, … until it returns nothing), sampling in ``no_grad`` and eval
   mode with the trainer's ``torch.Generator``;
2. rewards from ``task.verify``, then ``assign_rewards``, then DAPO overlong shaping (optional);
3. group advantages per ``group_key`` (grpo / drgrpo / rloo); DAPO dynamic sampling drops σ = 0 groups and
   draws new prompts until the batch is full or ``max_rounds`` is hit; then the ``advantages`` hook;
4. old_logp and entropy recomputed with ``logp_entropy`` (same code path as training: ρ = 1 on the first update);
5. per PPO epoch and mini-batch: ``token_weights`` → policy loss (+ k3 KL, + ``extra_loss``), grad clip, AdamW;
6. ``on_step_end``; metrics out.
"""

from __future__ import annotations

import copy
import io
import time
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
import torch

from compute.core.lm.model import TinyLM
from compute.core.lm.optim import AdamW
from compute.core.lm.sampling import Generation, generate, logp_entropy
from compute.core.rl.advantages import group_advantages, overlong_penalty, pass_at_k
from compute.core.rl.loss import aggregate, kl_k3, policy_loss
from compute.core.rl.plugins import LossContext, Plugin, PluginChain, RolloutSpec
from compute.core.tasks.base import Problem, Task, split_rng


@dataclass
class GRPOConfig:
    """Knobs of the RL loop (defaults: spec §2 "Defaults", design choices for tiny models)."""

    steps: int = 100
    prompts_per_step: int = 16
    group_size: int = 8  # G
    max_new: int = 64
    temperature: float = 1.0  # training rollouts; old_logp uses the same T
    top_p: float = 1.0  # keep 1.0: truncation makes rollouts off-policy
    estimator: str = "grpo"  # grpo | drgrpo | rloo
    loss_agg: str = "token-mean"  # token-mean | seq-mean-token-mean | constant
    eps_low: float = 0.2
    eps_high: float = 0.2  # 0.28 for DAPO clip-higher
    dual_clip: float = 10.0
    lr: float = 3e-5  # spec default 1e-4 degraded the small model (docs/papers/grpo_core.md)
    weight_decay: float = 0.0
    grad_clip: float = 1.0
    ppo_epochs: int = 1
    mini_batches: int = 1
    micro_batch_size: int = 0  # 0: one pass per mini-batch
    kl_coef: float = 0.0  # β of the k3 KL to the frozen SFT reference
    dynamic_sampling: bool = False
    max_rounds: int = 10
    overlong_cache: int = 0  # L_c of DAPO overlong shaping (0: off); L_max = max_new
    eval_every: int = 10
    n_eval: int = 200  # held-out problems for greedy accuracy during training
    passk_problems: int = 0  # held-out problems for pass@k (0: off)
    passk_n: int = 8
    passk_k: int = 4
    record_every: int = 25  # per-token records (artifact) every k steps; 0: off
    record_rows: int = 32
    post_update_kl: bool = True  # one extra no-grad forward for mean(old_logp − new_logp)
    seed: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class RolloutBatch:
    """N responses with everything the loss needs.  Token tensors are [N, R] (prompts [N, P], left-padded)."""

    prompt: torch.Tensor
    prompt_mask: torch.Tensor
    response: torch.Tensor
    response_mask: torch.Tensor
    sample_logp: torch.Tensor
    sample_entropy: torch.Tensor
    groups: torch.Tensor  # [N] long, one id per group_key
    roles: list[str]
    problems: list[Problem]
    specs: list[RolloutSpec]
    texts: list[str]
    phase: torch.Tensor  # [N]
    rewards: torch.Tensor = field(default_factory=lambda: torch.zeros(0))
    correct: torch.Tensor = field(default_factory=lambda: torch.zeros(0, dtype=torch.bool))
    infos: list[dict[str, Any]] = field(default_factory=list)
    seq_adv: torch.Tensor = field(default_factory=lambda: torch.zeros(0))
    adv: torch.Tensor = field(default_factory=lambda: torch.zeros(0))  # [N, R]
    old_logp: torch.Tensor = field(default_factory=lambda: torch.zeros(0))
    old_entropy: torch.Tensor = field(default_factory=lambda: torch.zeros(0))
    ref_logp: torch.Tensor | None = None

    def __len__(self) -> int:
        return self.response.shape[0]

    @property
    def lengths(self) -> torch.Tensor:
        return self.response_mask.sum(-1)

    def select(self, idx: torch.Tensor | list[int]) -> RolloutBatch:
        """Rows ``idx`` (tensors indexed, lists picked)."""
        idx_t = torch.as_tensor(idx, dtype=torch.long)
        il = idx_t.tolist()
        out = {}
        for k, v in self.__dict__.items():
            if torch.is_tensor(v) and v.dim() > 0 and v.shape[0] == len(self):
                out[k] = v[idx_t]
            elif isinstance(v, list) and len(v) == len(self):
                out[k] = [v[i] for i in il]
            else:
                out[k] = v
        return RolloutBatch(**out)


def _pad_to(x: torch.Tensor, width: int, value: float, left: bool) -> torch.Tensor:
    if x.shape[1] == width:
        return x
    pad = torch.full((x.shape[0], width - x.shape[1]), value, dtype=x.dtype, device=x.device)
    return torch.cat([pad, x] if left else [x, pad], dim=1)


def concat_batches(batches: list[RolloutBatch]) -> RolloutBatch:
    """Stack batches with different prompt / response widths (prompts left-, responses right-padded)."""
    if len(batches) == 1:
        return batches[0]
    P = max(b.prompt.shape[1] for b in batches)
    R = max(b.response.shape[1] for b in batches)
    out: dict[str, Any] = {}
    left = {"prompt", "prompt_mask"}
    for k, v0 in batches[0].__dict__.items():
        if isinstance(v0, list):
            out[k] = [x for b in batches for x in getattr(b, k)]
        elif v0 is None:
            out[k] = None
        elif torch.is_tensor(v0) and v0.dim() == 2:
            width = P if k in left else R
            out[k] = torch.cat([_pad_to(getattr(b, k), width, 0, k in left) for b in batches])
        else:
            out[k] = torch.cat([getattr(b, k) for b in batches])
    return RolloutBatch(**out)


@dataclass
class TrainerState:
    """What hooks can see and change (``cfg`` may be mutated by a controller in ``on_step_end``)."""

    cfg: GRPOConfig
    model: TinyLM
    task: Task
    ref_model: TinyLM | None
    generator: torch.Generator
    rng: np.random.Generator
    step: int = 0
    phase: int = 0
    rollouts: list[RolloutBatch] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


class GRPOTrainer:
    """Plain GRPO / Dr. GRPO / RLOO / DAPO on a TinyLM and a verifiable task, extended by plug-ins."""

    def __init__(
        self,
        model: TinyLM,
        task: Task,
        cfg: GRPOConfig,
        plugins: list[Plugin] | None = None,
        ref_model: TinyLM | None = None,
    ) -> None:
        self.cfg = cfg
        self.model = model
        self.task = task
        self.tok = task.tokenizer
        self.chain = PluginChain(plugins)
        missing = [t for t in self.chain.extra_tokens if t not in self.tok.stoi]
        if missing:
            raise ValueError(f"plug-in tokens {missing} are not in the checkpoint's vocabulary; rebuild SFT with them")
        if ref_model is None and cfg.kl_coef > 0:
            ref_model = copy.deepcopy(model)
        if ref_model is not None:
            ref_model.eval().requires_grad_(False)
        gen = torch.Generator(device=model.device).manual_seed(cfg.seed)
        self.state = TrainerState(cfg, model, task, ref_model, gen, split_rng(cfg.seed, "train"))
        self.opt = AdamW(model.parameters(), lr=cfg.lr, betas=(0.9, 0.99), weight_decay=cfg.weight_decay)
        self.eval_problems = task.sample(max(cfg.n_eval, cfg.passk_problems), split_rng(cfg.seed, "test"), "test")

    # ------------------------------------------------------------------------------------------
    # 1–3: rollouts, rewards, advantages
    # ------------------------------------------------------------------------------------------
    def default_specs(self, problems: list[Problem], round_: int = 0) -> list[RolloutSpec]:
        s = self.state.step
        return [
            RolloutSpec(self.task.prompt(p), self.cfg.group_size, p, (s, round_, i)) for i, p in enumerate(problems)
        ]

    def _generate(self, specs: list[RolloutSpec], phase: int) -> RolloutBatch:
        cfg = self.cfg
        fp = [s.force_prefix or [] for s in specs] if any(s.force_prefix for s in specs) else None
        # expand per-spec n into rows (specs may ask for different n)
        rows_p, rows_f, rows_s = [], [], []
        for j, s in enumerate(specs):
            rows_p += [s.prompt] * s.n
            rows_f += [(fp[j] if fp else [])] * s.n
            rows_s += [j] * s.n
        g: Generation = generate(
            self.model,
            rows_p,
            n=1,
            temperature=cfg.temperature,
            top_p=cfg.top_p,
            max_new=cfg.max_new,
            eos_id=self.tok.eos_id,
            pad_id=self.tok.pad_id,
            force_prefix=rows_f if fp else None,
            generator=self.state.generator,
        )
        keys = self.state.extra.setdefault("_group_ids", {})
        gid = [keys.setdefault(specs[j].group_key, len(keys)) for j in rows_s]
        texts = [self.tok.decode(g.response[i][g.response_mask[i] > 0].tolist()) for i in range(len(rows_s))]
        return RolloutBatch(
            prompt=g.prompt,
            prompt_mask=g.prompt_mask,
            response=g.response,
            response_mask=g.response_mask,
            sample_logp=g.logp,
            sample_entropy=g.entropy,
            groups=torch.tensor(gid, dtype=torch.long, device=g.response.device),
            roles=[specs[j].role for j in rows_s],
            problems=[specs[j].problem for j in rows_s],
            specs=[specs[j] for j in rows_s],
            texts=texts,
            phase=torch.full((len(rows_s),), phase, dtype=torch.long, device=g.response.device),
        )

    def rollout(self, problems: list[Problem], round_: int = 0) -> RolloutBatch:
        """Phases 0, 1, …: plan_rollouts → generate, until the chain plans nothing (at most 8 phases)."""
        st = self.state
        st.rollouts = []
        specs = self.default_specs(problems, round_)
        for phase in range(8):
            st.phase = phase
            specs = self.chain.plan_rollouts(specs if phase == 0 else [], st)
            if not specs:
                break
            st.rollouts.append(self._generate(specs, phase))
        return concat_batches(st.rollouts)

    def score(self, batch: RolloutBatch) -> None:
        """rewards ← verify, then assign_rewards, then overlong shaping."""
        rs, cs, infos = [], [], []
        for p, text in zip(batch.problems, batch.texts, strict=True):
            r, c, info = self.task.verify(p, text)
            rs.append(r)
            cs.append(c)
            infos.append(info)
        batch.rewards = torch.tensor(rs, dtype=torch.float32, device=batch.response.device)
        batch.correct = torch.tensor(cs, dtype=torch.bool, device=batch.response.device)
        batch.infos = infos
        batch.rewards = self.chain.assign_rewards(batch, batch.rewards, self.state)
        if self.cfg.overlong_cache > 0:
            # a response that never emitted EOS is treated as longer than L_max
            ended = (batch.response == self.tok.eos_id).any(-1)
            length = torch.where(ended, batch.lengths, torch.full_like(batch.lengths, self.cfg.max_new + 1))
            batch.rewards = batch.rewards + overlong_penalty(length, self.cfg.max_new, self.cfg.overlong_cache)

    def collect(self) -> tuple[RolloutBatch, dict[str, float]]:
        """Rollouts with rewards and advantages; DAPO dynamic sampling when enabled."""
        cfg = self.cfg
        parts: list[RolloutBatch] = []
        n_groups, rounds, seen_groups, total_rows = 0, 0, 0, 0
        for rounds in range(1, (cfg.max_rounds if cfg.dynamic_sampling else 1) + 1):
            problems = self.task.sample(cfg.prompts_per_step, self.state.rng, "train")
            b = self.rollout(problems, rounds - 1)
            self.score(b)
            b.seq_adv, keep = group_advantages(b.rewards, b.groups, cfg.estimator)
            total_rows += len(b)
            seen_groups += len(torch.unique(b.groups))
            if cfg.dynamic_sampling:
                parts.append(b)  # keep the unfiltered rounds for train metrics
                n_groups += len(torch.unique(b.groups[keep]))
                if n_groups >= cfg.prompts_per_step:
                    break
            else:
                parts.append(b)
        full = concat_batches(parts)
        stats = {"reward/train": float(full.rewards.mean()), "acc/train": float(full.correct.float().mean())}
        batch = full
        if cfg.dynamic_sampling:
            _, keep = group_advantages(full.rewards, full.groups, cfg.estimator)
            kept_groups = torch.unique(full.groups[keep])[: cfg.prompts_per_step]
            batch = full.select(torch.isin(full.groups, kept_groups).nonzero(as_tuple=True)[0])
            stats["groups/kept"] = len(kept_groups) / max(1, seen_groups)
            stats["groups/rounds"] = rounds
        else:
            _, keep = group_advantages(full.rewards, full.groups, cfg.estimator)
            stats["groups/kept"] = float(len(torch.unique(full.groups[keep]))) / max(1, seen_groups)
        batch.adv = batch.seq_adv[:, None] * batch.response_mask
        batch.adv = self.chain.advantages(batch, batch.adv, self.state)
        return batch, stats

    # ------------------------------------------------------------------------------------------
    # 4–5: old_logp and the update
    # ------------------------------------------------------------------------------------------
    @torch.no_grad()
    def recompute_old(self, batch: RolloutBatch) -> None:
        self.model.eval()
        batch.old_logp, batch.old_entropy = self._forward(self.model, batch)
        if self.state.ref_model is not None:
            batch.ref_logp, _ = self._forward(self.state.ref_model, batch)

    def _forward(self, model: TinyLM, batch: RolloutBatch) -> tuple[torch.Tensor, torch.Tensor]:
        """logp, entropy [N, R] in chunks of micro_batch_size (or one pass)."""
        mb = self.cfg.micro_batch_size or len(batch)
        lps, ents = [], []
        for i in range(0, len(batch), mb):
            lp, ent = logp_entropy(
                model,
                batch.prompt[i : i + mb],
                batch.prompt_mask[i : i + mb],
                batch.response[i : i + mb],
                self.cfg.temperature,
            )
            lps.append(lp)
            ents.append(ent)
        return torch.cat(lps), torch.cat(ents)

    def context(self, mb: RolloutBatch, logp: torch.Tensor, entropy: torch.Tensor) -> LossContext:
        return LossContext(
            logp=logp,
            old_logp=mb.old_logp,
            entropy=entropy,
            surprisal=-logp.detach(),
            adv=mb.adv,
            mask=mb.response_mask,
            ratio=torch.exp(torch.clamp(logp.detach() - mb.old_logp, -20, 20)),
            groups=mb.groups,
            roles=mb.roles,
            rewards=mb.rewards,
            step=self.state.step,
            batch=mb,
            state=self.state,
        )

    def minibatch_loss(self, mb: RolloutBatch, backward: bool = False) -> tuple[torch.Tensor, dict[str, float]]:
        """Total loss of one mini-batch (policy loss over the mini-batch's Σ mask, + KL, + extra_loss).

        With ``micro_batch_size`` the hooks see the mini-batch through a no-grad pre-pass and each micro-batch
        divides by the mini-batch's total Σ mask (never an average of per-micro-batch means).  With
        ``backward=True`` gradients are accumulated micro-batch by micro-batch.
        """
        cfg = self.cfg
        micro = cfg.micro_batch_size
        if micro and micro < len(mb):
            with torch.no_grad():
                lp_all, ent_all = self._forward(self.model, mb)
            tw = self.chain.token_weights(self.context(mb, lp_all, ent_all))
        else:
            micro = len(mb)
            lp_all, ent_all = logp_entropy(self.model, mb.prompt, mb.prompt_mask, mb.response, cfg.temperature)
            tw = self.chain.token_weights(self.context(mb, lp_all, ent_all))
        mask = mb.response_mask if tw.mask is None else mb.response_mask * tw.mask.float()
        weight = tw.weight
        denom = mask.sum()
        n_seq = int((mask.sum(-1) > 0).sum()) if cfg.loss_agg == "seq-mean-token-mean" else len(mb)
        total = torch.zeros((), device=mb.response.device)
        stats: dict[str, float] = {f"plugin/{k}": v for k, v in tw.stats.items()}
        clip = {"clip/upper": 0.0, "clip/lower": 0.0, "clip/dual": 0.0}
        for i in range(0, len(mb), micro):
            sl = slice(i, i + micro)
            if micro == len(mb):
                lp, ent = lp_all, ent_all
            else:
                lp, ent = logp_entropy(self.model, mb.prompt[sl], mb.prompt_mask[sl], mb.response[sl], cfg.temperature)
            m = mask[sl]
            loss, st, _ = policy_loss(
                lp,
                mb.old_logp[sl],
                mb.adv[sl],
                m,
                None if weight is None else weight[sl],
                cfg.eps_low,
                cfg.eps_high,
                cfg.dual_clip,
                cfg.loss_agg,
                cfg.max_new,
                denom,
                n_seq,
            )
            for k in clip:
                clip[k] += st[k] * float(m.sum()) / max(1.0, float(denom))
            if cfg.kl_coef > 0 and mb.ref_logp is not None:
                kl = aggregate(kl_k3(lp, mb.ref_logp[sl]), m, cfg.loss_agg, cfg.max_new, denom, n_seq)
                loss = loss + cfg.kl_coef * kl
                stats["kl/ref"] = stats.get("kl/ref", 0.0) + float(kl.detach())
            sub = mb.select(list(range(len(mb)))[sl]) if micro != len(mb) else mb
            extra = self.chain.extra_loss(self.context(sub, lp, ent))
            if extra is not None:
                loss = loss + extra
                stats["loss/extra"] = stats.get("loss/extra", 0.0) + float(extra.detach())
            if backward:
                loss.backward()
            total = total + (loss.detach() if backward else loss)
        stats.update(clip)
        stats["loss/policy"] = float(total)
        return total, stats

    def update(self, batch: RolloutBatch) -> dict[str, float]:
        cfg = self.cfg
        self.model.train()
        agg: dict[str, list[float]] = {}
        n = len(batch)
        for _ in range(cfg.ppo_epochs):
            perm = (
                torch.randperm(n, generator=self.state.generator, device=self.model.device)
                if cfg.mini_batches > 1
                else torch.arange(n)
            )
            for chunk in torch.chunk(perm, cfg.mini_batches):
                mb = batch.select(chunk)
                self.opt.zero_grad(set_to_none=True)
                _, st = self.minibatch_loss(mb, backward=True)
                gn = torch.nn.utils.clip_grad_norm_(self.model.parameters(), cfg.grad_clip)
                self.opt.step()
                st["grad/norm"] = float(gn)
                for k, v in st.items():
                    agg.setdefault(k, []).append(v)
        self.model.eval()
        return {k: float(np.mean(v)) for k, v in agg.items()}

    # ------------------------------------------------------------------------------------------
    # evaluation and the loop
    # ------------------------------------------------------------------------------------------
    @torch.no_grad()
    def evaluate(self, problems: list[Problem] | None = None, batch: int = 256) -> dict[str, float]:
        """Held-out greedy accuracy (and pass@k at T = 1 on the first ``passk_problems``)."""
        cfg = self.cfg
        problems = problems if problems is not None else self.eval_problems[: cfg.n_eval]
        correct = 0
        for i in range(0, len(problems), batch):
            chunk = problems[i : i + batch]
            g = generate(
                self.model,
                [self.task.prompt(p) for p in chunk],
                temperature=0.0,
                max_new=cfg.max_new,
                eos_id=self.tok.eos_id,
                pad_id=self.tok.pad_id,
            )
            for j, p in enumerate(chunk):
                correct += self.task.verify(p, self.tok.decode(g.response[j][g.response_mask[j] > 0].tolist()))[1]
        out = {"acc/heldout": correct / max(1, len(problems))}
        if cfg.passk_problems:
            pk = self.eval_problems[: cfg.passk_problems]
            g = generate(
                self.model,
                [self.task.prompt(p) for p in pk],
                n=cfg.passk_n,
                temperature=1.0,
                max_new=cfg.max_new,
                eos_id=self.tok.eos_id,
                pad_id=self.tok.pad_id,
                generator=torch.Generator(device=self.model.device).manual_seed(cfg.seed + 7),
            )
            p1, pk_ = [], []
            for i, p in enumerate(pk):
                c = sum(
                    self.task.verify(p, self.tok.decode(g.response[r][g.response_mask[r] > 0].tolist()))[1]
                    for r in range(i * cfg.passk_n, (i + 1) * cfg.passk_n)
                )
                p1.append(pass_at_k(cfg.passk_n, c, 1))
                pk_.append(pass_at_k(cfg.passk_n, c, cfg.passk_k))
            out["pass/at1"] = float(np.mean(p1))
            out[f"pass/at{cfg.passk_k}"] = float(np.mean(pk_))
        return out

    def token_records(self, batch: RolloutBatch) -> bytes:
        """Compact per-token records (float16 npz) of the first ``record_rows`` rows: surprisal, entropy,
        advantage, ω, mask, reward, group."""
        rows = list(range(min(self.cfg.record_rows, len(batch))))
        mb = batch.select(rows)
        with torch.no_grad():
            tw = self.chain.token_weights(self.context(mb, mb.old_logp, mb.old_entropy))
        w = torch.ones_like(mb.old_logp) if tw.weight is None else tw.weight
        m = mb.response_mask if tw.mask is None else mb.response_mask * tw.mask.float()
        buf = io.BytesIO()
        np.savez_compressed(
            buf,
            surprisal=(-mb.old_logp).cpu().numpy().astype(np.float16),
            entropy=mb.old_entropy.cpu().numpy().astype(np.float16),
            adv=mb.adv.cpu().numpy().astype(np.float16),
            weight=w.cpu().numpy().astype(np.float16),
            mask=m.cpu().numpy().astype(np.uint8),
            response_mask=mb.response_mask.cpu().numpy().astype(np.uint8),
            reward=mb.rewards.cpu().numpy(),
            group=mb.groups.cpu().numpy(),
        )
        return buf.getvalue()

    def train_step(self) -> tuple[dict[str, float], RolloutBatch]:
        """One full RL step; returns the step's stats and its batch."""
        cfg, st = self.cfg, self.state
        times: dict[str, float] = {}
        t0 = time.perf_counter()
        batch, stats = self.collect()
        t1 = time.perf_counter()
        times["time/rollout_reward"] = t1 - t0
        if len(batch) == 0:
            stats.update(times)
            return stats, batch
        self.recompute_old(batch)
        t2 = time.perf_counter()
        times["time/old_logp"] = t2 - t1
        stats.update(self.update(batch))
        t3 = time.perf_counter()
        times["time/update"] = t3 - t2
        m = batch.response_mask > 0
        ent = batch.old_entropy[m]
        q = torch.quantile(ent, torch.tensor([0.1, 0.5, 0.9], device=ent.device)) if ent.numel() else torch.zeros(3)
        stats.update(
            {
                "entropy/mean": float(ent.mean()) if ent.numel() else 0.0,
                "entropy/q10": float(q[0]),
                "entropy/q50": float(q[1]),
                "entropy/q90": float(q[2]),
                "length/mean": float(batch.lengths.mean()),
                "throughput/tokens_per_s": float(batch.lengths.sum()) / max(1e-9, times["time/rollout_reward"]),
            }
        )
        if cfg.post_update_kl:
            with torch.no_grad():
                new_lp, _ = self._forward(self.model, batch)
            stats["kl/approx"] = float(
                ((batch.old_logp - new_lp) * batch.response_mask).sum() / batch.response_mask.sum()
            )
        stats.update(times)
        stats.update(self.chain.on_step_end(stats, st))
        return stats, batch

    def train(self, reporter: Any = None, steps: int | None = None) -> list[dict[str, float]]:
        """Run ``steps`` RL steps, streaming every metric; returns the per-step stats."""
        cfg = self.cfg
        steps = cfg.steps if steps is None else steps
        history = []
        for s in range(steps):
            self.state.step = s
            stats, batch = self.train_step()
            if (cfg.eval_every and (s + 1) % cfg.eval_every == 0) or s == steps - 1:
                te = time.perf_counter()
                stats.update(self.evaluate())
                stats["time/eval"] = time.perf_counter() - te
            history.append(stats)
            if reporter is not None:
                reporter.scalars(s + 1, stats)
                if cfg.record_every and (s % cfg.record_every == 0 or s == steps - 1) and len(batch):
                    reporter.artifact(f"tokens/step{s + 1:05d}.npz", self.token_records(batch))
                msg = f"step {s + 1}/{steps}: reward {stats['reward/train']:.3f}"
                if "acc/heldout" in stats:
                    msg += f", held-out acc {stats['acc/heldout']:.3f}"
                reporter.progress((s + 1) / steps, msg)
                if reporter.should_stop():
                    reporter.log(f"stopped after {s + 1} steps")
                    break
        return history


def with_overrides(cfg: GRPOConfig, **kw: Any) -> GRPOConfig:
    return replace(cfg, **kw)
