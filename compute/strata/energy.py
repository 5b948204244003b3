"""Efficiency counters: simulated days per wall-clock day and per kWh (paper: 48 sim-days/MWh, ≈50× SCREAM).

Power P̄ comes from Linux RAPL (``/sys/class/powercap/intel-rapl:0/energy_uj``) when readable, else from a stated
wattage.  sim-days per kWh = sim_days / (P̄ · t / 3.6e6).
"""

from __future__ import annotations

import time
from pathlib import Path

RAPL = Path("/sys/class/powercap/intel-rapl:0/energy_uj")


def read_rapl_uj() -> float | None:
    try:
        return float(RAPL.read_text().strip())
    except (OSError, ValueError):
        return None


class EnergyMeter:
    """Context manager accumulating wall time and (if RAPL is readable) package energy in joules over its uses."""

    def __init__(self, watts: float) -> None:
        self.watts = watts
        self.seconds = 0.0
        self.joules = 0.0
        self.source = "assumed"

    def __enter__(self) -> EnergyMeter:
        self._t0 = time.perf_counter()
        self._e0 = read_rapl_uj()
        return self

    def __exit__(self, *exc: object) -> None:
        dt = time.perf_counter() - self._t0
        self.seconds += dt
        e1 = read_rapl_uj()
        if self._e0 is not None and e1 is not None and e1 >= self._e0:
            self.joules += (e1 - self._e0) * 1e-6
            self.source = "RAPL"
        else:
            self.joules += self.watts * dt


def efficiency(sim_days: float, seconds: float, joules: float) -> dict[str, float]:
    """Simulated days per wall-clock day and per kWh."""
    return {
        "sim_days_per_day": sim_days * 86400.0 / max(seconds, 1e-12),
        "sim_days_per_kwh": sim_days / max(joules / 3.6e6, 1e-30),
    }
