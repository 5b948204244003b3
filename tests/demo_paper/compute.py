import time

from compute.core.reporter import Reporter


def counter(params: dict, reporter: Reporter) -> dict:
    n = params["n_steps"]
    k = params["points_per_step"]
    for step in range(n):
        if reporter.should_stop():
            return {"stopped_at": step}
        if params["fail"] and step >= n // 2:
            raise RuntimeError("demo failure requested")
        if params.get("emit_time"):
            now = time.time()
            reporter.series("demo/y", [step * k + j for j in range(k)], [now] * k)
        elif k == 1:
            reporter.scalar("demo/y", step, params["a"] * step)
        else:
            reporter.series(
                "demo/y", [step * k + j for j in range(k)], [params["a"] * (step * k + j) for j in range(k)]
            )
        reporter.progress((step + 1) / n, f"step {step + 1}/{n}")
        if params["sleep"]:
            time.sleep(params["sleep"])
    reporter.table("summary", [{"n": n, "a": params["a"], "seed": params["seed"]}])
    reporter.figure("bar", {"data": [{"type": "bar", "x": ["a"], "y": [params["a"]]}], "layout": {}})
    reporter.log("done")
    reporter.artifact("result.txt", f"last={params['a'] * (n * k - 1)}\n")
    return {"last": params["a"] * (n * k - 1), "n_points": n * k, "device": params["device"]}


def sleeper(params: dict, reporter: Reporter) -> dict:
    t0 = time.monotonic()
    step = 0
    while time.monotonic() - t0 < params["seconds"]:
        try:
            reporter.scalar("demo/tick", step, time.monotonic() - t0)
            time.sleep(0.1)
            step += 1
        except BaseException:  # noqa: BLE001 - deliberately ignores the soft time limit when asked to
            if not params["ignore_soft"]:
                raise
    return {"ticks": step}
