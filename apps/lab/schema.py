"""OpenAPI post-processing: one JSON Schema component per experiment's config (from the declarations)."""

from __future__ import annotations

from typing import Any


def add_experiment_schemas(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    from .registry import registry

    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    refs = []
    for exp in registry.experiments.values():
        name = "Config_" + exp.id.replace("/", "__")
        schema = exp.json_schema()
        schema["description"] = f"config for experiment '{exp.id}': {exp.summary}"
        schemas[name] = schema
        refs.append({"$ref": f"#/components/schemas/{name}"})
    req = schemas.get("RunCreateRequest")
    if req and "config" in req.get("properties", {}) and refs:
        desc = req["properties"]["config"].get("description", "")
        req["properties"]["config"] = {"description": desc, "anyOf": refs}
    return result
