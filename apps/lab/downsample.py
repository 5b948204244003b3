"""Server-side downsampling of long series: min/max per bucket (keeps peaks; says so in the response)."""

from __future__ import annotations

import math


def downsample(xs: list[float], ys: list[float | None], max_points: int) -> tuple[list[float], list[float | None]]:
    """Keep first and last points and, per bucket, the min and max of y (in x order): ≤ max_points points."""
    n = len(xs)
    if n <= max_points or max_points < 4:
        return list(xs), list(ys)
    buckets = max(1, (max_points - 2) // 2)
    size = (n - 2) / buckets
    out_x, out_y = [xs[0]], [ys[0]]
    for b in range(buckets):
        lo = 1 + int(math.floor(b * size))
        hi = min(n - 1, 1 + int(math.floor((b + 1) * size)))
        if hi <= lo:
            continue
        idx = [i for i in range(lo, hi) if ys[i] is not None]
        if not idx:
            continue
        i_min = min(idx, key=lambda i: ys[i])  # type: ignore[arg-type,return-value]
        i_max = max(idx, key=lambda i: ys[i])  # type: ignore[arg-type,return-value]
        for i in sorted({i_min, i_max}):
            out_x.append(xs[i])
            out_y.append(ys[i])
    out_x.append(xs[-1])
    out_y.append(ys[-1])
    return out_x, out_y
