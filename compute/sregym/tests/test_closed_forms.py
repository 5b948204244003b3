"""Known answers: the metastability classes, back-off, localisation scores, oracles on recorded windows."""

from __future__ import annotations

import math

import pytest

from compute.sregym.control import backoff_delay
from compute.sregym.faults import FaultSpec
from compute.sregym.metastable import boundary_rate, classify
from compute.sregym.obs import parse_metrics, quantile_from_buckets
from compute.sregym.oracles import Slo, detection_oracle, diagnosis_oracle, judge_window, localization_score


@pytest.mark.parametrize(
    ("lam", "mu", "r", "cls"),
    [
        (100, 160, 3, "metastable"),
        (100, 160, 0, "stable"),
        (100, 90, 0, "overloaded"),
        (30, 80, 1, "stable"),
        (60, 80, 1, "metastable"),
    ],
)
def test_metastability_classes(lam: float, mu: float, r: int, cls: str) -> None:
    assert classify(lam, mu, r) == cls


def test_spec_defaults_and_boundary() -> None:
    mu = 8 / 0.050  # c = 8, S = 50 ms
    assert mu == pytest.approx(160.0)
    assert 8 / (0.050 + 0.200) == pytest.approx(32.0)  # the trigger: +200 ms → 32 rps
    assert boundary_rate(mu, 3) == pytest.approx(40.0)  # λ(1+R) = μ at λ = 40
    assert classify(boundary_rate(mu, 3) * 1.01, mu, 3) == "metastable"
    assert classify(boundary_rate(mu, 3) * 0.99, mu, 3) == "stable"


def test_crash_loop_backoff_sequence() -> None:
    assert [backoff_delay(n) for n in range(1, 9)] == [1, 2, 4, 8, 16, 30, 30, 30]


@pytest.mark.parametrize(
    ("answer", "score"), [({"cart"}, 100.0), ({"cart", "payment"}, 50.0), ({"payment"}, 0.0), (set(), 0.0)]
)
def test_localization_scoring_aiopslab(answer: set[str], score: float) -> None:
    assert localization_score({"cart"}, answer) == score


def test_detection_and_diagnosis_oracles() -> None:
    assert detection_oracle("Yes", True)["success"] and detection_oracle("No", False)["success"]
    assert not detection_oracle("Yes", False)["success"] and not detection_oracle("no", True)["success"]
    spec = FaultSpec("catalog", "bad_db_password")
    assert diagnosis_oracle({"component": "catalog", "category": "misconfig"}, [spec])["success"]
    assert not diagnosis_oracle({"component": "catalog", "category": "network"}, [spec])["success"]
    assert not diagnosis_oracle({"component": "cart", "category": "misconfig"}, [spec])["success"]


HEALTHY = {"submitted": 150, "rps": 30.0, "success": 1.0, "amplification": 1.0, "p95": 0.08}
SERVICE_OK = {"gateway": {"queue": 0.0, "pool_waiters": 0.0, "amplification": 1.0}}


def test_mitigation_probe_on_recorded_windows() -> None:
    slo = Slo()
    assert judge_window(HEALTHY, SERVICE_OK, slo) == (True, "healthy")
    stopped = {**HEALTHY, "submitted": 0, "rps": 0.0, "success": 0.0}  # traffic stopped: goodput guard
    assert not judge_window(stopped, SERVICE_OK, slo)[0]
    trickle = {**HEALTHY, "submitted": 15, "rps": 3.0}  # scaled down to a trickle that happens to succeed
    assert "goodput guard" in judge_window(trickle, SERVICE_OK, slo)[1]
    scaled_to_zero = {**HEALTHY, "success": 0.0, "p95": math.inf}  # gateway at 0 replicas: every request 503
    assert not judge_window(scaled_to_zero, SERVICE_OK, slo)[0]
    storm = {"checkout": {"queue": 40.0, "pool_waiters": 0.0, "amplification": 3.9}}
    assert "queue" in judge_window(HEALTHY, storm, slo)[1]
    assert (
        "amplification"
        in judge_window(HEALTHY, {"cart": {"queue": 0.0, "pool_waiters": 0.0, "amplification": 2.0}}, slo)[1]
    )
    assert not judge_window({**HEALTHY, "success": 0.94}, SERVICE_OK, slo)[0]
    assert not judge_window({**HEALTHY, "p95": 1.2}, SERVICE_OK, slo)[0]


def test_histogram_quantiles_and_metrics_parser() -> None:
    # 10 requests in (0.01, 0.025], 10 in (0.025, 0.05]: the median is the bucket edge 0.025
    counts = [0, 0, 10, 10] + [0] * 8
    assert quantile_from_buckets(counts, 0.5) == pytest.approx(0.025)
    assert quantile_from_buckets(counts, 0.75) == pytest.approx(0.0375)
    assert math.isnan(quantile_from_buckets([0] * 12, 0.5))
    text = 'svc_requests_total{service="cart",pid="7"} 12\nsvc_latency_seconds_bucket{service="cart",pid="7",le="0.005"} 3\n'
    text += 'svc_info{service="cart",pid="7",version="2"} 1\n'
    m = parse_metrics(text)
    assert m["svc_requests_total"] == 12 and m["buckets"] == [3.0] and m["version"] == 2
