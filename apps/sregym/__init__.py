"""sregym: a live SRE-agent benchmark on a loopback microservice system (Su et al., NeurIPS 2026)."""
