"""The shop: six services, their call graph and default capacity/retry settings (spec §2 "Application")."""

from __future__ import annotations

import copy
import sqlite3
from pathlib import Path
from typing import Any

# gateway → {catalog, cart, recommender}; cart → checkout → payment; catalog and cart → data store
DEPS: dict[str, list[str]] = {
    "gateway": ["catalog", "recommender", "cart"],
    "catalog": ["datastore"],
    "recommender": [],
    "cart": ["checkout", "datastore"],
    "checkout": ["payment"],
    "payment": [],
}
SERVICES = list(DEPS)
NODES = [*SERVICES, "datastore"]
DB_SECRET = "s3cret-shop-2026"
# the client mix at the gateway (browse fans out to catalog + recommender)
MIX = [("/browse", 0.5), ("/cart", 0.3), ("/checkout", 0.2)]

DEFAULTS: dict[str, dict[str, Any]] = {
    "gateway": {"c": 64, "service_ms": 2, "timeout_ms": 1500, "retries": 1, "backoff_ms": 50},
    "catalog": {"c": 8, "service_ms": 10, "pool_size": 4},
    "recommender": {"c": 8, "service_ms": 15},
    "cart": {"c": 8, "service_ms": 10, "timeout_ms": 700, "retries": 1, "backoff_ms": 50, "pool_size": 4},
    "checkout": {"c": 4, "service_ms": 30, "timeout_ms": 500, "retries": 0},
    "payment": {"c": 8, "service_ms": 20},
}


def make_configs(run_dir: Path, seed: int = 0, overrides: dict[str, dict[str, Any]] | None = None) -> dict[str, dict]:
    """Per-service v1 configs; creates the SQLite data store, the DB secret and the sandboxes under run_dir."""
    run_dir = Path(run_dir)
    (run_dir / "logs").mkdir(parents=True, exist_ok=True)
    db = run_dir / "shop.db"
    if not db.exists():
        con = sqlite3.connect(db)
        con.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT, price REAL)")
        con.executemany("INSERT INTO items VALUES (?, ?, ?)", [(i, f"item{i}", 1.0 + i) for i in range(1, 201)])
        con.commit()
        con.close()
    (run_dir / "db.secret").write_text(DB_SECRET)
    configs = {}
    for name, deps in DEPS.items():
        cfg: dict[str, Any] = {
            "name": name,
            "queue_limit": 64,
            "downstream": [d for d in deps if d != "datastore"],
            "log_path": str(run_dir / "logs" / f"{name}.jsonl"),
            "span_path": str(run_dir / "logs" / f"{name}.spans"),
            "seed": seed,
            **copy.deepcopy(DEFAULTS[name]),
        }
        if "datastore" in deps:
            cfg.update(db_path=str(db), secret_path=str(run_dir / "db.secret"), db_password=DB_SECRET)
        if name == "checkout":
            sandbox = run_dir / "sandbox" / name
            sandbox.mkdir(parents=True, exist_ok=True)
            cfg.update(sandbox=str(sandbox), disk_cap_kb=512)
        cfg.update((overrides or {}).get(name, {}))
        configs[name] = cfg
    return configs
