"""The config fields every GRPO-on-the-tiny-LM app shares: the task and the SFT checkpoint it starts from.

Apps subclass :class:`CheckpointFields` (a dataclass) and add their own knobs; ``from_params`` keeps only the
declared fields the class knows, and ``sft()`` turns the shared fields into the core's ``SFTConfig`` so that
apps with the same task/size/token budget reuse one cached checkpoint.
"""

from __future__ import annotations

from dataclasses import dataclass

from compute.core.config import FromParams
from compute.core.lm.sft import SFTConfig
from compute.core.tasks import TaskConfig


@dataclass
class CheckpointFields(FromParams):
    task: str = "arithmetic"
    min_digits: int = 2
    max_digits: int = 2
    size: str = "small"
    sft_tokens: int = 600_000
    sft_lr: float = 2e-3
    max_new: int = 64
    threads: int = 2
    seed: int = 0
    device: str = "cpu"

    def sft(self, n_val: int = 200, seed: int = 0) -> SFTConfig:
        """``n_val`` only sizes the build's validation check; ``seed`` is part of the checkpoint hash."""
        return SFTConfig(
            task=TaskConfig(name=self.task, min_digits=self.min_digits, max_digits=self.max_digits),
            size=self.size,
            tokens=self.sft_tokens,
            lr=self.sft_lr,
            max_new=self.max_new,
            n_val=n_val,
            seed=seed,
        )
