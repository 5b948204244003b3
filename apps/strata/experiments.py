"""Declarations of the strata paper and its experiments (no Django, no compute imports)."""

from __future__ import annotations

from typing import Any

from apps.lab.declare import Choice, Experiment, Figure, Float, FloatList, Int, IntList, Line, Paper, Table

PAPER = Paper(
    slug="strata",
    title="STRATA: scaling storm-resolving atmospheric AI simulation to the entire planet",
    abstract=(
        "An autoregressive emulator of global storm-resolving dynamics trained on small spatial tiles of 10-minute "
        "SCREAM output (17 days at 4.9 km) and rolled out globally by blending overlapping tiles.  3D patch "
        "embedding, local 3D neighbourhood attention, a stereographic rotary position embedding (StereoRoPE) and a "
        "pixel-space de-aliasing decoder.  Claims: km-scale emulation needs ≈10× the FLOPs per grid point of coarse "
        "models; stable 24-hour global rollouts; 48 simulated days per MWh, ≈50× SCREAM's energy efficiency."
    ),
    arxiv="2606.31248",
    authors=["Zeyuan Hu", "Akshay Subramaniam", "Mike Pritchard", "Noah Brenowitz"],
    tags=["weather/climate emulation", "neighbourhood attention", "RoPE", "spherical geometry", "NeurIPS 2026"],
    notes=(
        "SCREAM data are replaced by a generated moist shallow-water world on the sphere (torch-harmonics spectral "
        "solver + flux-form moisture, condensation, latent heating, evaporation).  The model is re-implemented from "
        "the paper and spec (physicsnemo is not imported); the blending window (sin² taper) and training schedule "
        "are design choices."
    ),
)

DATA = [
    Choice("nlat", 32, choices=[16, 32, 64, 128], label="grid latitudes (longitudes = 2×)", group="Data"),
    Float("days", 3.0, min=0.5, max=17.0, label="simulated days of 10-min frames", group="Data"),
    Float("dt", 600.0, min=60.0, max=600.0, label="solver time step (s)", help="must divide 600 s", group="Data"),
    Float("tau_hours", 1.0, min=0.1, max=12.0, label="condensation time τ (h)", group="Data"),
    Float("gamma", 4.0e4, min=0.0, max=2.0e5, label="latent heating γ (m²/s² per unit q)", group="Data"),
    Float("mach", 1.0, min=0.1, max=2.0, label="initial flow amplitude (Mach-like)", group="Data"),
    Float("rotation", 1.0, min=0.0, max=3.0, label="rotation Ω/Ω_earth", group="Data"),
]

MODEL = [
    Int("tile", 16, min=8, max=64, label="tile T (pixels)", group="Model"),
    Int("patch", 2, min=2, max=8, label="patch p", group="Model"),
    Int("width", 64, min=16, max=192, label="width (multiple of 16)", group="Model"),
    Int("depth", 3, min=1, max=8, label="transformer blocks", group="Model"),
    Int("na_kernel", 5, min=3, max=9, label="NA kernel k", group="Model"),
    Choice(
        "rope",
        "stereo",
        choices=[("none", "none"), ("axial_index", "axial (integer index)"), ("stereo", "StereoRoPE")],
        group="Model",
    ),
    Choice(
        "decoder",
        "bilinear_dw",
        choices=[("none", "none (linear unpatchify)"), ("pixel_proj", "pixel_proj"), ("bilinear_dw", "bilinear_dw")],
        label="pixel de-aliasing decoder",
        group="Model",
    ),
    Int("steps", 150, min=3, max=5000, label="training steps", group="Training"),
    Int("batch", 8, min=2, max=64, label="batch (tiles)", group="Training"),
    Float("lr", 1e-3, min=1e-5, max=1e-2, log=True, label="learning rate (AdamW, cosine)", group="Training"),
    Int("unroll", 1, min=1, max=4, label="multi-step fine-tuning unroll (last 20% of steps)", group="Training"),
]


def _check_data(p: dict[str, Any]) -> dict[str, str] | None:
    if abs(round(600.0 / p["dt"]) * p["dt"] - 600.0) > 1e-6:
        return {"dt": "must divide the 10-minute frame interval (600 s)"}
    if p["nlat"] >= 64 and p["dt"] > 300.0:
        return {"dt": "use dt ≤ 300 s at 64 latitudes or more (CFL)"}
    return None


def _check_model(p: dict[str, Any]) -> dict[str, str] | None:
    err = _check_data(p) or {}
    if p["width"] % 16:
        err["width"] = "must be a multiple of 16 (head dim 16)"
    if p["tile"] > p["nlat"]:
        err["tile"] = f"must be at most the number of latitudes ({p['nlat']})"
    elif p["tile"] % p["patch"] or p["tile"] // p["patch"] < 2:
        err["patch"] = "must divide the tile into at least 2×2 patches"
    if "overlap" in p and 2 * p["overlap"] >= (p["eval_tile"] or p["tile"]):
        err["overlap"] = "must be below tile/2"
    if p.get("eval_tile") and (p["eval_tile"] > p["nlat"] or p["eval_tile"] % p["patch"]):
        err["eval_tile"] = "must be at most nlat and divisible by the patch"
    return err or None


GENERATE = Experiment(
    slug="generate_data",
    title="Moist shallow-water world (the training-data build step)",
    description=(
        "Generate the 10-minute frames (h, u, v, q, P) the emulator learns from, and check the generator's budgets.\n"
        "Spectral shallow water on the sphere (torch-harmonics) with flux-form moisture, condensation C = max(q−q_s,0)/τ, "
        "latent heating −γC on the geopotential and evaporation towards 1.003·q_s.  Cached; E2–E4 reuse it."
    ),
    compute="compute.strata.run:generate_data",
    params=DATA,
    presets={
        "smoke": {"nlat": 16, "days": 0.5},
        "paper headline": {"nlat": 128, "days": 17.0, "dt": 300.0},
        "dry (no latent heating)": {"gamma": 0.0},
    },
    panels=[
        Figure("Precipitation and vorticity", key="precip_anim", width=12),
        Line("Mass and water (relative change), budget closure", keys=["budget/*"], x_label="hours", width=6),
        Line("Rain-area fraction", keys=["rain/area_fraction"], x_label="hours", width=6),
        Line(
            "Kinetic-energy spectrum (zonal)",
            keys=["spectrum/kinetic_energy"],
            x_label="zonal wavenumber",
            x_log=True,
            y_log=True,
            width=6,
        ),
        Table("Summary", key="data_summary", width=6),
    ],
    cost_seconds=40,
    soft_time_limit=1700,
    time_limit=1800,
    check=_check_data,
)

TRAIN = Experiment(
    slug="train_tiles",
    title="Train on random tiles (RoPE and decoder ablations)",
    description=(
        "One-step MSE on normalised 10-min increments of random T×T tiles; 1-step skill against persistence.\n"
        "3D patch embedding, neighbourhood-attention blocks with RoPE (none / axial index / StereoRoPE) and the "
        "zero-initialised pixel de-aliasing decoder.  The checkpoint is cached and reused by the rollout."
    ),
    compute="compute.strata.run:train_tiles",
    params=DATA + MODEL,
    presets={
        "smoke": {"nlat": 16, "days": 0.5, "tile": 8, "width": 16, "depth": 1, "steps": 3, "batch": 2},
        "ablation: axial RoPE": {"rope": "axial_index"},
        "ablation: no decoder": {"decoder": "none"},
        "paper headline": {
            "nlat": 128,
            "days": 17.0,
            "dt": 300.0,
            "tile": 32,
            "patch": 4,
            "width": 96,
            "steps": 2000,
            "batch": 16,
        },
    },
    panels=[
        Line("Loss (normalised increments)", keys=["loss/train", "loss/val"], y_log=True, width=6),
        Line("1-step RMSE ÷ persistence (validation tiles)", keys=["skill/*"], width=6),
        Table("1-step RMSE on test tiles", key="one_step", width=6),
        Figure("Sample test tiles (q increment)", key="sample_tiles", width=6),
    ],
    cost_seconds=120,
    soft_time_limit=3500,
    time_limit=3600,
    check=_check_model,
)

ROLLOUT = Experiment(
    slug="global_rollout",
    title="Global rollout by blended tiles: error vs lead, seams, spectra, efficiency",
    description=(
        "Roll the tile model over the whole sphere for up to 24 h by blending overlapping tiles.\n"
        "RMSE/ACC vs lead against persistence and climatology, the seam metric with and without overlap, the "
        "zonal spectrum near the patch wavenumber, and simulated days per kWh of emulator vs solver."
    ),
    compute="compute.strata.run:global_rollout",
    params=DATA
    + MODEL
    + [
        Int("overlap", 4, min=0, max=16, label="tile overlap o", group="Rollout"),
        Choice(
            "window",
            "cosine",
            choices=[("cosine", "sin² taper"), ("linear", "linear taper"), ("uniform", "uniform")],
            label="blending window",
            group="Rollout",
        ),
        Float("lead_hours", 24.0, min=1.0, max=72.0, label="lead time (h)", group="Rollout"),
        Int(
            "eval_tile",
            0,
            min=0,
            max=64,
            label="rollout tile (0 = training tile)",
            help="a larger tile than trained on tests grid invariance (StereoRoPE vs axial index)",
            group="Rollout",
        ),
        Float("watts", 15.0, min=1.0, max=2000.0, label="assumed power (W) when RAPL is unreadable", group="Rollout"),
    ],
    presets={
        "smoke": {
            "nlat": 16,
            "days": 0.5,
            "tile": 8,
            "width": 16,
            "depth": 1,
            "steps": 3,
            "batch": 2,
            "overlap": 2,
            "lead_hours": 1.0,
        },
        "no overlap": {"overlap": 0},
        "paper headline": {
            "nlat": 128,
            "days": 17.0,
            "dt": 300.0,
            "tile": 32,
            "patch": 4,
            "width": 96,
            "steps": 2000,
            "batch": 16,
            "overlap": 8,
            "lead_hours": 24.0,
        },
    },
    panels=[
        Figure("q: truth vs emulator", key="rollout_anim", width=12),
        Line("RMSE of h vs lead", keys=["rmse_h/*"], x_label="lead (h)", y_label="m", width=6),
        Line("RMSE of q vs lead", keys=["rmse_q/*"], x_label="lead (h)", width=6),
        Line("ACC of h", keys=["acc/h"], x_label="lead (h)", width=4),
        Line("Rain-area fraction", keys=["rain/*"], x_label="lead (h)", width=4),
        Line(
            "Stability: max |x − mid| ÷ half training range",
            keys=["stability/max_over_range"],
            x_label="lead (h)",
            width=4,
        ),
        Line(
            "Zonal power of u (first hour)",
            keys=["spectrum/*"],
            x_label="zonal wavenumber",
            x_log=True,
            y_log=True,
            width=6,
        ),
        Table("Seam metric (1 = seamless)", key="seams", width=6),
        Table("Efficiency: simulated days per day and per kWh", key="efficiency", width=12),
        Table("Summary", key="rollout_summary", width=12),
    ],
    cost_seconds=150,
    soft_time_limit=3500,
    time_limit=3600,
    check=_check_model,
)


ISOFLOP = Experiment(
    slug="iso_flop",
    title="Mini iso-FLOP study: loss vs model size at fixed training FLOPs",
    description=(
        "For each FLOP budget, train several widths for steps = budget / (3 × forward FLOPs) and compare val loss.\n"
        "FLOPs are counted with torch's FlopCounterMode (neighbourhood attention costs N·K·d, breaking 6ND); the "
        "optimum's FLOPs per grid point is reported.  Run it at two grids (nlat 32 and 64) to compare resolutions."
    ),
    compute="compute.strata.run:iso_flop",
    params=DATA
    + [
        Int("tile", 16, min=8, max=64, label="tile T", group="Model"),
        Int("patch", 2, min=2, max=8, label="patch p", group="Model"),
        Int("depth", 2, min=1, max=8, label="blocks", group="Model"),
        FloatList(
            "budgets",
            [1e10, 3e10],
            min=1e8,
            max=1e15,
            min_len=1,
            max_len=4,
            label="training FLOP budgets",
            group="Study",
        ),
        IntList(
            "widths",
            [16, 48, 128],
            min=16,
            max=256,
            min_len=2,
            max_len=6,
            label="widths (multiples of 16)",
            group="Study",
        ),
        Int("batch", 8, min=2, max=64, label="batch", group="Study"),
        Float("lr", 2e-3, min=1e-5, max=1e-2, log=True, label="learning rate", group="Study"),
    ],
    presets={
        "smoke": {"nlat": 16, "days": 0.5, "tile": 8, "depth": 1, "budgets": [2e8], "widths": [16, 32], "batch": 2},
        "paper headline": {
            "nlat": 64,
            "dt": 300.0,
            "days": 6.0,
            "budgets": [1e11, 3e11, 1e12],
            "widths": [16, 32, 64, 128, 192],
        },
        "second resolution (64×128)": {"nlat": 64, "dt": 300.0},
    },
    panels=[
        Line(
            "Validation loss vs parameters (one series per budget)",
            keys=["isoflop/*"],
            x_label="parameters",
            y_label="val loss",
            x_log=True,
            mode="lines+markers",
            width=6,
        ),
        Line(
            "Forward FLOPs per grid point",
            keys=["flops/per_grid_point"],
            x_label="parameters",
            x_log=True,
            y_log=True,
            mode="markers",
            width=6,
        ),
        Table("Runs", key="isoflop", width=6),
        Table("Optimum per budget", key="isoflop_optimum", width=6),
    ],
    cost_seconds=150,
    soft_time_limit=3500,
    time_limit=3600,
    check=lambda p: (
        ({"widths": "must be multiples of 16"} if any(w % 16 for w in p["widths"]) else None)
        or (
            {"tile": "must be at most nlat and divisible by patch"}
            if p["tile"] > p["nlat"] or p["tile"] % p["patch"]
            else None
        )
    ),
)

EXPERIMENTS = [GENERATE, TRAIN, ROLLOUT, ISOFLOP]
