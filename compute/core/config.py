"""The one bridge from a run's validated params dict to a paper's config dataclass."""

from __future__ import annotations

from dataclasses import fields
from typing import Any, Self


class FromParams:
    """Mixin for config dataclasses that mirror an experiment's declared parameters.

    ``from_params`` keeps the keys the dataclass has and ignores the rest (run fields such as ``seed`` or
    ``device`` that a config does not take, or parameters of a sibling experiment).
    """

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> Self:
        names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
        return cls(**{k: v for k, v in params.items() if k in names})
