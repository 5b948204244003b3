"""STEP losses, schedule, prototypes, sampler and the exact length-1 transformer layer."""

import numpy as np
import torch
from torch import nn

from compute.progression.config import StepConfig
from compute.progression.data import make_dataset
from compute.progression.model import (
    LIFE_MARGIN,
    RUL_MARGIN,
    StepModel,
    TripletSampler,
    length1_layer,
    make_groups,
    naive_sample,
    proto_loss,
    triplet_loss,
)
from compute.progression.preprocess import prepare
from compute.progression.train import train_encoder


def test_triplet_known_answers() -> None:
    za = torch.tensor([[1.0, 2.0, -0.5, 0.3]])
    zp_perp = torch.tensor([[2.0, -1.0, 0.0, 0.0]])  # orthogonal to za
    assert abs(float(triplet_loss(za, za, -za))) < 1e-7  # relu(-1 - 1 + 1) = 0
    assert abs(float(triplet_loss(za, zp_perp, za)) - 2.0) < 1e-6  # relu(1 - 0 + 1) = 2


def test_proto_loss_and_schedule() -> None:
    e1, e2 = torch.eye(4)[0], torch.eye(4)[1]
    z = torch.stack([e1, e2, torch.zeros(4)])
    assert float(proto_loss(z, torch.tensor([True, False, False]), torch.tensor([False, True, False]), e1, e2)) == 0.0
    # the zero vector at the end state: mean((0 - e2)^2) = 1/4
    assert (
        abs(float(proto_loss(z, torch.tensor([True, False, False]), torch.tensor([False, False, True]), e1, e2)) - 0.25)
        < 1e-7
    )
    cfg = StepConfig()
    assert cfg.beta_at(0) == 0.1
    assert abs(cfg.beta_at(13) - 0.1 * 0.95**13) < 1e-12  # 0.0513 > floor
    assert cfg.beta_at(14) == 0.05  # 0.1 * 0.95^14 = 0.0488 < 0.05
    assert StepConfig(beta=0.0).beta_at(0) == 0.0  # beta = 0: no prototypes at all (ablation)


def test_prototypes_are_fixed_orthonormal_buffers() -> None:
    prep = prepare(make_dataset("fd001", 20, seed=0), 10)
    cfg = StepConfig(epochs=1, z_dim=8)
    model, _ = train_encoder(prep.train, cfg)
    names = {n for n, _ in model.named_parameters()}
    assert "e1" not in names and "e2" not in names
    assert all(p is not model.e1 and p is not model.e2 for p in model.parameters())
    P = torch.stack([model.e1, model.e2])
    assert torch.equal(P @ P.T, torch.eye(2))
    assert torch.equal(model.e1, torch.eye(8)[0]) and torch.equal(model.e2, torch.eye(8)[1])  # bit-identical


def test_sampler_invariants_and_determinism() -> None:
    prep = prepare(make_dataset("fd001", 20, seed=1), 10)
    W = prep.train
    for grouping, margin in (("rul", RUL_MARGIN), ("time", LIFE_MARGIN)):
        group, key, m = make_groups(W.rul, W.life, grouping)
        assert m == margin and set(np.unique(group)) == {0, 1, 2, 3}
        s = TripletSampler(W.unit, group, key, m)
        idx = np.arange(len(W.unit))
        pos, neg = s.sample(idx, np.random.default_rng(0))
        assert np.all(W.unit[pos] == W.unit[idx]) and np.all(group[pos] == group[idx])
        assert np.all(np.abs(key[pos] - key[idx]) < m)
        assert np.mean(pos != idx) > 0.99  # the anchor itself only when no other candidate exists
        assert np.all(group[neg] != group[idx])
        p2, n2 = s.sample(idx, np.random.default_rng(0))
        np.testing.assert_array_equal(pos, p2)
        np.testing.assert_array_equal(neg, n2)
        # the released-style per-item sampler obeys the same constraints
        sub = idx[::97]
        pn, nn_ = naive_sample(W.unit, group, key, m, sub, np.random.default_rng(0))
        assert np.all(W.unit[pn] == W.unit[sub]) and np.all(np.abs(key[pn] - key[sub]) < m)
        assert np.all(group[nn_] != group[sub])
    # RUL groups: >125 -> 0 (healthy), (75,125] -> 1, (30,75] -> 2, <=30 -> 3
    g, _, _ = make_groups(np.array([200.0, 125.0, 76.0, 75.0, 31.0, 30.0, 0.0]), np.zeros(7), "rul")
    np.testing.assert_array_equal(g, [0, 1, 1, 2, 2, 3, 3])


def test_length1_fast_path_equals_torch_transformer() -> None:
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(32, 8, dim_feedforward=128, dropout=0.0, activation="gelu", batch_first=True)
    x = torch.randn(64, 32)
    for mode in (True, False):
        layer.train(mode)
        ref = layer(x[:, None, :])[:, 0]
        assert torch.allclose(length1_layer(layer, x), ref, atol=1e-5)
    cfg = StepConfig()
    model = StepModel(10, 14, cfg).eval()
    X = torch.rand(16, 10, 14)
    enc = model.encoder
    ref = enc.head(enc.transformer(enc.inp(X.reshape(16, 1, -1)) + enc.pos).mean(1))
    assert torch.allclose(enc(X), ref, atol=1e-5)
