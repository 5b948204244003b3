"""Integration on the micro world (spec §5): the full ①–④ pipeline localizes planted defects.

The micro world (width 16, 400 steps, 3000 renders) is trained once and cached under
``$PAPERLAB_DATA_DIR/lotts`` (default ``data/lotts``); the first run trains it (minutes), later runs load it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from compute.lotts.config import MICRO_WORLD, SearchConfig, WorldConfig
from compute.lotts.experiments import localization_metrics, planted_set, quality_vs_nfe
from compute.lotts.world import build_world

torch.set_num_threads(1)  # one thread, as the lab runner does (the machine is shared)


@pytest.fixture(scope="module")
def world():
    torch.set_num_threads(1)
    return build_world(WorldConfig(**MICRO_WORLD), Path(os.environ.get("PAPERLAB_DATA_DIR", "data")) / "lotts")


def test_planted_defects_are_localized_on_the_micro_model(world) -> None:
    ps = planted_set(30, 16, seed=1)
    out = localization_metrics(world, ps, r=0.2, lam=0.3, loc_t=(0.2, 0.4), layers="s2", seed=1)
    assert out["full"]["auroc"] > 0.7
    assert out["full"]["iou"] > 2 * out["random_iou"]
    assert out["loc_nfe_per_image"] == 2 * 2  # 2 prompts × n_t = 2, conditional passes only


def test_lotts_keeps_the_unmasked_region_and_counts_its_cost(world) -> None:
    cfg = SearchConfig(**MICRO_WORLD, n_prompts=2, bon_n=(1, 2), lotts_k=(1,), steps=10)
    run = quality_vs_nfe(world, cfg, seed=0)
    assert run.consistency["max_abs_change_outside_before_holistic"] == 0.0
    assert (
        run.consistency["mean_abs_change_outside_after_holistic"]
        < run.consistency["mean_abs_change_inside_after_holistic"]
    )
    per = 2 * cfg.steps
    restart = len([t for t in range(0, 1000, 1000 // cfg.steps) if t <= 500])
    assert run.bon.nfe == [per, 2 * per]
    assert run.methods["lotts"].nfe == [per + 2 * len(cfg.loc_t) + cfg.branch * 2 * (restart + cfg.h_hol)]
    assert run.methods["resample"].nfe == [per + cfg.branch * 2 * (restart + cfg.h_hol)]
