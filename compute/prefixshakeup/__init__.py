"""PrefixShakeup: proactive prompt-prefix re-forming for offline LLM tagging (design reconstruction)."""
