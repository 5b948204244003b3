"""What the paper packages share: the reporter protocol, seeding, devices (and later the tiny LM/GRPO core)."""
