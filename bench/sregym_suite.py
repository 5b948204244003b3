"""sregym benchmark: the 20-problem suite × agents × seeds on the live loopback shop.

    PYTHONPATH=. .venv/bin/python bench/sregym_suite.py --seeds 2 --out /tmp/sregym-bench

Writes verdicts.csv/json (per problem), categories.json (per category × agent: detection,
localisation, diagnosis and mitigation success, median TTM), times.json (TTD/TTL/TTM) and prints
the category table with the spread of mitigation success across failure kinds.
"""

from compute.sregym.bench import main

if __name__ == "__main__":
    main()
