"""Known answers of the modified ALL friction model (SceneFactory's logged values, Zhao 2024 tables)."""

import math

import pytest
import torch

from compute.scenefactory.friction import (
    all_friction,
    contact_length_ratio,
    hydrodynamic_ratio,
    hydroplaning_speed,
    rain_to_film,
    surface_friction,
    zhao_fit_rmse,
)


@pytest.mark.parametrize("h_mm,expected", [(0.0, 1.174), (0.5, 0.944), (5.0, 0.506), (12.0, 0.408)])
def test_mu_matches_scenefactory_logged_values(h_mm: float, expected: float) -> None:
    assert float(all_friction(13.89, h_mm, "AC")) == pytest.approx(expected, abs=0.002)


@pytest.mark.parametrize("h_mm,kmh", [(5.0, 104.0), (10.0, 85.0), (20.0, 71.0)])
def test_hydroplaning_speed(h_mm: float, kmh: float) -> None:
    assert hydroplaning_speed(h_mm) * 3.6 == pytest.approx(kmh, abs=1.5)
    v = hydroplaning_speed(h_mm)
    assert float(all_friction(v + 0.5, h_mm)) == 0.0 < float(all_friction(v - 0.5, h_mm))


def test_zhao_table_fit_rmse() -> None:
    r2, r3 = zhao_fit_rmse()
    assert r2 == pytest.approx(0.040, abs=0.003)
    assert r3 == pytest.approx(0.021, abs=0.003)


def test_shape_monotone_and_no_cliff() -> None:
    h = torch.linspace(0.0, 20.0, 201, dtype=torch.float64)
    mu_h = all_friction(60 / 3.6, h)
    assert torch.all(torch.diff(mu_h) <= 1e-12)
    assert float(all_friction(60 / 3.6, h[h >= 0.8]).min()) > 0.0  # the A-as-area bug gave μ=0 from 0.8 mm
    v = torch.linspace(1.0, 30.0, 100, dtype=torch.float64)
    assert torch.all(torch.diff(all_friction(v, 0.5)) <= 1e-12)


def test_dry_limits_and_surfaces() -> None:
    assert float(contact_length_ratio(20.0, 0.0, 0.65e-3)) == 1.0
    assert float(hydrodynamic_ratio(20.0, 0.0)) == 0.0
    # dry: θ scales nothing in the steady state (θY_R cancels inside the LuGre term) except via max(θY_R − Y_F, 0)
    assert float(all_friction(13.89, 0.0, "SMA")) == pytest.approx(
        1.09 * float(all_friction(13.89, 0.0, "AC")), rel=1e-9
    )
    mu = surface_friction(torch.tensor([0.0, 5.0, 5.0]), torch.tensor([0, 0, 2]))
    assert float(mu[0]) == pytest.approx(1.174, abs=0.002) and float(mu[2]) > float(mu[1])


def test_rain_to_film() -> None:
    assert rain_to_film(10.0) == pytest.approx(0.5)
    assert rain_to_film(500.0) == 3.0 and rain_to_film(-1.0) == 0.0
    assert math.isclose(rain_to_film(10.0, drainage=0.5), 0.25)
