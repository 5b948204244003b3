"""Sample-size design for bounds on probabilities of causation (PNS, PN, PS and multi-valued families).

bounds.py (Tian–Pearl term tables), lp.py (multi-valued LP bounds with duals), sampling.py (binomial and
multinomial sampling model), rules.py (distribution-free, plug-in and safe pilot rules), inference.py (naive
delta, directional delta, bootstrap CIs), run.py (the four experiments), config.py (their configs).
"""
