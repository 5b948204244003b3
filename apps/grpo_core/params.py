"""Parameter blocks every app that runs GRPO on the shared tiny LM declares (Django-free, like experiments.py).

The SFT-checkpoint fields and their defaults are the grpo_core ones, so apps with the same task and budget
reuse one cached checkpoint (compute/core/rl/config.py mirrors them).
"""

from __future__ import annotations

from typing import Any

from apps.lab.declare import Choice, Float, Int

SIZES = [("micro", "micro (tests)"), ("small", "small, 0.8 M"), ("medium", "medium, 2.7 M")]


def digits(max_digits: int = 6, help: str = "") -> list[Any]:
    return [
        Int("min_digits", 2, min=1, max=max_digits, label="min digits", help=help, group="Task"),
        Int("max_digits", 2, min=1, max=max_digits, label="max digits", help=help, group="Task"),
    ]


def checkpoint(sizes: list[tuple[str, str]] = SIZES, sft_tokens: int = 600_000) -> list[Any]:
    return [
        Choice("size", "small", choices=sizes, label="model size", group="SFT checkpoint"),
        Int(
            "sft_tokens",
            sft_tokens,
            min=2_000,
            max=20_000_000,
            log=True,
            label="SFT token budget",
            group="SFT checkpoint",
        ),
    ]


def sft_lr() -> Any:
    return Float("sft_lr", 2e-3, min=1e-5, max=1e-2, log=True, label="SFT learning rate", group="SFT checkpoint")


def budget(lr: float = 1e-4, lr_min: float = 1e-5, prompts_min: int = 2, steps: int = 100) -> list[Any]:
    """Steps, prompts per step, G, max new tokens, learning rate."""
    return [
        Int("steps", steps, min=1, max=1000, group="Budget"),
        Int("prompts_per_step", 16, min=prompts_min, max=64, label="prompts per step", group="Budget"),
        Int("group_size", 8, min=2, max=16, label="G", group="Budget"),
        Int("max_new", 64, min=16, max=256, label="max new tokens", group="Budget"),
        Float(
            "lr", lr, min=lr_min, max=1e-3 if lr_min >= 1e-5 else 1e-2, log=True, label="learning rate", group="Budget"
        ),
    ]


def evaluation(n_eval: int = 200, n_eval_final: int = 500, final_label: str = "held-out problems, final") -> list[Any]:
    return [
        Int("eval_every", 10, min=1, max=100, label="eval every (steps)", group="Evaluation"),
        Int("n_eval", n_eval, min=8, max=2000, label="held-out problems per eval", group="Evaluation"),
        Int("n_eval_final", n_eval_final, min=8, max=5000, label=final_label, group="Evaluation"),
    ]


def check_common(p: dict[str, Any]) -> dict[str, str]:
    """Digit range and evaluation sizes; returns the (possibly empty) error dict for the caller to extend."""
    errs: dict[str, str] = {}
    if "min_digits" in p and p["min_digits"] > p["max_digits"]:
        errs["max_digits"] = "must be at least min digits"
    if "n_eval_final" in p and p["n_eval"] > p["n_eval_final"]:
        errs["n_eval"] = "must be at most the final evaluation size"
    return errs
