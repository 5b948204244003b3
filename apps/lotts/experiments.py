"""Declarations of the lotts paper and its four experiments (no Django, no compute imports)."""

from __future__ import annotations

from typing import Any

from apps.lab.declare import Choice, Experiment, Figure, Float, FloatList, Int, IntList, Line, Paper, Table

PAPER = Paper(
    slug="lotts",
    title="Scale Where It Matters: Training-Free Localized Scaling for Diffusion Models (LoTTS)",
    abstract=(
        "Test-time scaling of text-to-image diffusion usually resamples whole images (Best-of-N), yet defects are "
        "local.  LoTTS localizes defects by contrasting cross-attention under high- and low-quality prompts, "
        "propagating it with self-attention and adding a foreground prior; it re-noises and re-denoises only the "
        "masked region with spatial, temporal and holistic consistency, then keeps the best refinement by a "
        "verifier.  Training-free on SD2.1, SDXL and FLUX, it needs about 2–4× fewer samples than Best-of-N."
    ),
    arxiv="2511.19917",
    authors=["Ren", "Wang", "Guo", "Zhang", "Fan", "You"],
    tags=["diffusion", "test-time scaling", "attention maps", "inpainting", "NeurIPS 2026"],
    notes=(
        "TOY WORLD: no text-to-image weights can be had offline, so the mechanism runs on a 16×16 shape/colour/"
        "position world with planted local defects and captions carrying 'high quality'/'low quality' tokens, a "
        "compact cross-attention UNet trained here (the build step), a CNN selection verifier and a held-out CNN "
        "evaluator of another architecture plus a template-residual oracle.  The paper's DFS search, its attention "
        "layers/timesteps and λ, r, t₀ are unpublished: the choices are listed in docs/papers/lotts.md."
    ),
)

LAYERS = [
    ("down", "down block S/2"),
    ("up", "up block S/2"),
    ("s2", "both S/2 blocks"),
    ("mid", "mid block S/4"),
    ("all", "all"),
]
WORLD = [
    Choice("size", 16, choices=[(16, "16×16"), (32, "32×32")], label="image side S", group="World"),
    Int("width", 16, min=8, max=64, label="UNet width (blocks w, 2w, 2w)", group="World"),
    Choice("prediction", "v", choices=[("v", "v-prediction (SD2.1-v)"), ("eps", "ε-prediction")], group="World"),
    Int("train_steps", 1200, min=2, max=20000, log=True, label="denoiser training steps", group="World"),
    Int("n_train", 20000, min=100, max=200000, log=True, label="training renders", group="World"),
    Int("verifier_steps", 600, min=2, max=5000, log=True, label="verifier training steps", group="World"),
    Float("p_def", 0.4, min=0.0, max=0.9, label="p_def (defective training fraction)", group="World"),
    Int("world_seed", 0, min=0, max=1000, label="world seed", group="World"),
]
SEARCH = [
    Int("n_prompts", 8, min=2, max=64, label="prompts", group="Search"),
    IntList("bon_n", [1, 2, 4, 8, 16], min=1, max=32, min_len=2, max_len=8, label="Best-of-N N", group="Search"),
    IntList(
        "lotts_k", [1, 2, 4], min=1, max=16, min_len=1, max_len=6, label="LoTTS k (initial candidates)", group="Search"
    ),
    Int("branch", 2, min=1, max=8, label="b: refinements per node", group="Search"),
    Int("depth", 1, min=1, max=3, label="D: DFS depth", group="Search"),
    Float("r", 0.2, min=0.05, max=0.5, label="r: mask ratio", group="LoTTS"),
    Float("t0_frac", 0.5, min=0.1, max=0.9, label="t₀ / T (restart level)", group="LoTTS"),
    Int("h_hol", 2, min=0, max=5, label="h_hol: holistic steps", group="LoTTS"),
    Float("lam", 0.3, min=0.0, max=2.0, label="λ: foreground prior", group="LoTTS"),
    FloatList("loc_t", [0.2, 0.4], min=0.02, max=0.98, min_len=1, max_len=4, label="localization t / T", group="LoTTS"),
    Int("dilate", 0, min=0, max=2, label="mask dilation (px)", group="LoTTS"),
    Choice("layers", "down", choices=LAYERS, label="attention blocks", group="LoTTS"),
    Choice(
        "propagation",
        "sa",
        choices=[("sa", "② CA′ = SA·CA (paper)"), ("none", "skip ② (ablation)")],
        label="step ② self-attention propagation",
        group="LoTTS",
    ),
    Float("cfg_scale", 3.0, min=1.0, max=7.0, label="CFG scale w", group="Sampling"),
    Int("steps", 20, min=4, max=50, label="DDIM steps S (η = 0)", group="Sampling"),
]
TINY_WORLD = {"width": 8, "train_steps": 4, "n_train": 128, "verifier_steps": 2}


def _check_budget(p: dict[str, Any]) -> dict[str, str] | None:
    n = max(max(p["bon_n"]), max(p["lotts_k"]))
    nfe = p["n_prompts"] * (n * 2 * p["steps"] * 4)  # BoN pool + three refinement methods, rough upper bound
    if nfe > 400_000:
        return {"n_prompts": f"≈{nfe:,} image-NFEs: lower prompts, N or k"}
    return None


BUILD = Experiment(
    slug="build_world",
    title="Build step: train the toy T2I diffusion model and the two verifiers",
    description=(
        "Train (once, cached under the data directory) the text-conditioned UNet and both verifiers.\n"
        "Shapes × colours × 3×3 positions with planted local defects; 'low quality' marks defective images; "
        "the quality token is dropped 30 % and the caption 10 % of the time for classifier-free guidance."
    ),
    compute="compute.lotts.run:build",
    params=[*WORLD],
    presets={
        "smoke": TINY_WORLD,
        "micro (tests)": {"width": 16, "train_steps": 400, "n_train": 3000, "verifier_steps": 150},
        "paper headline": {},
        "spec width 32": {"width": 32, "train_steps": 1500},
    },
    panels=[
        Line("Denoiser loss", keys=["train/loss"], x_label="step", y_label="v-MSE (smoothed)", y_log=True, width=6),
        Table("World", key="world", width=6),
        Table("Verifier accuracy on fresh renders", key="verifiers", width=12),
        Figure("Samples", key="samples", width=12),
    ],
    cost_seconds=2400,
    soft_time_limit=7000,
    time_limit=7200,
)

QUALITY = Experiment(
    slug="quality_vs_nfe",
    title="Quality vs NFE: LoTTS vs Best-of-N, Resampling and random-mask LoTTS",
    description=(
        "Held-out quality of the verifier-selected image against the NFE spent, on the same initial noises.\n"
        "One NFE = one UNet pass on one image; a CFG step costs 2; LoTTS pays 2·n_t conditional passes per "
        "localization.  Select with the CNN verifier, evaluate with the held-out CNN and the template residual."
    ),
    compute="compute.lotts.run:quality",
    params=[*SEARCH, *WORLD],
    presets={
        "smoke": {**TINY_WORLD, "n_prompts": 2, "bon_n": [1, 2], "lotts_k": [1], "steps": 6},
        "paper headline": {"n_prompts": 32, "bon_n": [1, 2, 4, 8, 16], "lotts_k": [1, 2, 4], "r": 0.2, "t0_frac": 0.5},
        "depth 2": {"depth": 2},
    },
    panels=[
        Figure("Held-out CNN score vs NFE (95 % CI)", key="quality_ci", width=12),
        Line(
            "Held-out CNN score",
            keys=["heldout/*"],
            x_label="NFE per prompt (CFG = 2)",
            x_log=True,
            mode="lines+markers",
            width=4,
        ),
        Line(
            "Template residual (lower is better)",
            keys=["template/*"],
            x_label="NFE per prompt (CFG = 2)",
            x_log=True,
            mode="lines+markers",
            width=4,
        ),
        Line(
            "Selection-verifier score",
            keys=["select/*"],
            x_label="NFE per prompt (CFG = 2)",
            x_log=True,
            mode="lines+markers",
            width=4,
        ),
        Table("Speed-up at equal held-out quality", key="speedup", width=6),
        Table("Matched-NFE ordering (held-out, interpolated at LoTTS's NFE)", key="ordering", width=6),
        Table("All budgets", key="quality", width=12),
        Table("Consistency (outside vs inside the mask)", key="consistency", width=6),
        Table("NFE counter", key="nfe_counter", width=6),
        Figure("Gallery: candidate → mask → refined", key="gallery", width=12),
    ],
    cost_seconds=150,
    soft_time_limit=3400,
    time_limit=3600,
    check=_check_budget,
)

LOCALIZATION = Experiment(
    slug="localization",
    title="Localization quality on planted defects (AUROC, IoU, ablations of ①–④)",
    description=(
        "AUROC of the score map P and IoU of the top-r mask M against the exact masks of planted defects.\n"
        "Per timestep and layer, per defect kind, and with each of ① contrast, ② self-attention propagation, "
        "③ foreground prior, ④ percentile mask removed."
    ),
    compute="compute.lotts.run:localization",
    params=[
        Int("n_images", 64, min=5, max=1000, log=True, label="planted images"),
        Float("r", 0.2, min=0.05, max=0.5, label="r: mask ratio"),
        Float("lam", 0.3, min=0.0, max=2.0, label="λ: foreground prior"),
        FloatList("loc_t", [0.2, 0.4], min=0.02, max=0.98, min_len=1, max_len=6, label="localization t / T"),
        Choice("layers", "down", choices=LAYERS, label="attention blocks"),
        Int("dilate", 0, min=0, max=2, label="mask dilation (px)"),
        Int("gallery", 6, min=1, max=12, label="gallery rows"),
        *WORLD,
    ],
    presets={
        "smoke": {**TINY_WORLD, "n_images": 5, "gallery": 2},
        "paper headline": {"n_images": 200, "loc_t": [0.1, 0.2, 0.3, 0.4, 0.6]},
        "spec timesteps (0.4T, 0.6T)": {"loc_t": [0.4, 0.6]},
    },
    panels=[
        Table("Ablations of ①–④", key="ablations", width=6),
        Table("Per defect kind", key="by_kind", width=6),
        Line(
            "AUROC per timestep and layer",
            keys=["auroc/*"],
            x_label="t",
            y_label="AUROC",
            mode="lines+markers",
            width=6,
        ),
        Table("Per timestep and layer", key="per_step", width=6),
        Figure("Heatmap gallery", key="heatmaps", width=12),
    ],
    cost_seconds=20,
    soft_time_limit=1700,
    time_limit=1800,
)

GRID_KNOBS = [("r", "r"), ("t0_frac", "t₀ / T"), ("h_hol", "h_hol"), ("k", "k")]
SENSITIVITY = Experiment(
    slug="sensitivity",
    title="Sensitivity of LoTTS to k, r, t₀ and h_hol at a fixed NFE budget",
    description=(
        "Held-out quality of LoTTS over a grid of two knobs; k fills the budget of Best-of-N at budget_bon.\n"
        "The paper reports results stable across k, r and t₀."
    ),
    compute="compute.lotts.run:sensitivity",
    params=[
        Choice("grid_x", "r", choices=GRID_KNOBS, label="x knob"),
        Choice("grid_y", "t0_frac", choices=GRID_KNOBS, label="y knob"),
        FloatList("x_values", [0.1, 0.2, 0.35], min=0.0, max=16.0, min_len=1, max_len=6, label="x values"),
        FloatList("y_values", [0.3, 0.5, 0.7], min=0.0, max=16.0, min_len=1, max_len=6, label="y values"),
        Int("budget_bon", 4, min=1, max=16, label="budget = NFE of Best-of-N at N"),
        *[p for p in SEARCH if p.name not in ("bon_n", "lotts_k")],
        *WORLD,
    ],
    presets={
        "smoke": {**TINY_WORLD, "n_prompts": 2, "steps": 6, "x_values": [0.2], "y_values": [0.5]},
        "paper headline": {
            "grid_x": "r",
            "grid_y": "t0_frac",
            "x_values": [0.1, 0.2, 0.3, 0.5],
            "y_values": [0.2, 0.4, 0.5, 0.6, 0.8],
            "n_prompts": 16,
        },
        "h_hol × k": {"grid_x": "h_hol", "grid_y": "k", "x_values": [0, 1, 2, 4], "y_values": [1, 2], "budget_bon": 8},
    },
    panels=[Figure("Held-out quality heatmap", key="heatmap", width=7), Table("Grid", key="grid", width=5)],
    cost_seconds=120,
    soft_time_limit=3400,
    time_limit=3600,
    check=lambda p: {"grid_y": "pick two different knobs"} if p["grid_x"] == p["grid_y"] else None,
)

EXPERIMENTS = [BUILD, QUALITY, LOCALIZATION, SENSITIVITY]
