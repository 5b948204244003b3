"""sregym: a live SRE-agent benchmark on a loopback microservice system (SREGym, Su et al., NeurIPS 2026)."""
