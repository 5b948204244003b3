"""Synthetic verifiable tasks with exact checkers (arithmetic, Countdown, word problems) and the task registry."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from compute.core.tasks.arithmetic import Arithmetic
from compute.core.tasks.base import Problem, Task, in_split, split_rng
from compute.core.tasks.countdown import Countdown
from compute.core.tasks.wordproblems import WordProblems

TASKS = ("arithmetic", "countdown", "wordproblems")


@dataclass
class TaskConfig:
    """Which task and its difficulty knobs (one dataclass for all three; unused knobs are ignored)."""

    name: str = "arithmetic"
    # arithmetic
    min_digits: int = 2
    max_digits: int = 3
    ops: str = "+-"
    # countdown
    n_numbers: int = 3
    max_number: int = 20
    # word problems
    min_ops: int = 2
    max_ops: int = 4
    n_distractors: int = 1
    # SFT trace noise / alternative strategies (entropy of the warm-up policy)
    p_direct: float = 0.2
    p_line_error: float = 0.05

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def make_task(cfg: TaskConfig, extra_tokens: tuple[str, ...] | list[str] = ()) -> Task:
    """Build a task (and its tokenizer, with the plug-ins' role tokens) from its config."""
    extra = tuple(extra_tokens)
    if cfg.name == "arithmetic":
        return Arithmetic(cfg.min_digits, cfg.max_digits, cfg.ops, cfg.p_direct, cfg.p_line_error, extra)
    if cfg.name == "countdown":
        return Countdown(cfg.n_numbers, cfg.max_number, extra_tokens=extra)
    if cfg.name == "wordproblems":
        return WordProblems(
            cfg.min_ops, cfg.max_ops, cfg.n_distractors, p_line_error=cfg.p_line_error, extra_tokens=extra
        )
    raise ValueError(f"unknown task {cfg.name!r}; choose from {TASKS}")


__all__ = [
    "TASKS",
    "Arithmetic",
    "Countdown",
    "Problem",
    "Task",
    "TaskConfig",
    "WordProblems",
    "in_split",
    "make_task",
    "split_rng",
]
