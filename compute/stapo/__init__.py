"""STAPO (arXiv 2602.15620): spurious-token-aware policy optimization as a plug-in on the shared GRPO core."""
