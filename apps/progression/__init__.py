"""progression: STEP, interpretable representations of progressive time series (NeurIPS 2026, arXiv 2605.31061)."""
