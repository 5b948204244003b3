"""A controllable fake paper for the platform's own tests (installed by the test settings only)."""

from apps.lab.declare import Bool, Choice, Experiment, Figure, Float, FloatList, Int, Line, Paper, Table

PAPER = Paper(slug="demo", title="Demo paper (platform tests)", abstract="Emits known series for tests.", tags=["test"])

EXPERIMENTS = [
    Experiment(
        slug="counter",
        title="Counter",
        description="Emits y = a·step for n steps, sleeping between reports.",
        compute="tests.demo_paper.compute:counter",
        params=[
            Int("n_steps", 20, min=1, max=100_000, help="number of steps"),
            Float("a", 2.0, min=-10, max=10, help="slope"),
            Float("sleep", 0.0, min=0, max=5, help="seconds to sleep per step"),
            Int("points_per_step", 1, min=1, max=100_000),
            Bool("fail", False, help="raise an error half-way"),
            Bool("emit_time", False, help="values are wall-clock emission times (latency benchmark)"),
            Choice("mode", "lines", choices=["lines", "markers"]),
            FloatList("weights", [0.5, 0.5], min=0, max=1, min_len=2, max_len=5),
        ],
        presets={"smoke": {"n_steps": 5}, "slow": {"n_steps": 400, "sleep": 0.05}},
        panels=[Line("y", keys=["demo/y"]), Table("summary", key="summary"), Figure("bar", key="bar")],
        check=lambda p: {"weights": "must sum to 1"} if abs(sum(p["weights"]) - 1) > 1e-9 else None,
        soft_time_limit=600,
        time_limit=660,
    )
]

EXPERIMENTS.append(
    Experiment(
        slug="sleeper",
        title="Sleeper",
        description="Sleeps in small steps; with ignore_soft it swallows the soft time limit (to test the hard one).",
        compute="tests.demo_paper.compute:sleeper",
        params=[Float("seconds", 30.0, min=0.1, max=600), Bool("ignore_soft", False)],
        presets={"smoke": {"seconds": 0.2}},
        panels=[Line("ticks", keys=["demo/tick"])],
        soft_time_limit=4,
        time_limit=16,  # wide margin: the soft-limit handler must finish before the hard kill, even under load
    )
)
