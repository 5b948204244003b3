"""Export a run (CSV / JSON) and move it between instances as a zip bundle (`manage.py importrun`)."""

from __future__ import annotations

import csv
import io
import json
import zipfile
from typing import Any

from django.core.files.base import ContentFile
from django.db import transaction
from django.utils.dateparse import parse_datetime

from .events import series_for
from .models import Artifact, Experiment, Run, RunFigure, RunLog, RunStatus, RunTable, SeriesChunk

BUNDLE_VERSION = 1


def run_record(run: Run) -> dict[str, Any]:
    return {
        "experiment": run.experiment.key,
        "status": run.status,
        "config": run.config,
        "seed": run.seed,
        "device_requested": run.device_requested,
        "device": run.device,
        "summary": run.summary,
        "environment": run.environment,
        "error": run.error,
        "traceback": run.traceback,
        "tags": run.tags,
        "note": run.note,
        "created_at": run.created_at.isoformat(),
        "started_at": run.started_at.isoformat() if run.started_at else None,
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "owner": run.owner.username if run.owner else None,
        "source": run.source,
    }


def export_json(run: Run) -> dict[str, Any]:
    """Everything about a run in one JSON object (series at full resolution)."""
    return {
        "run": {"id": run.pk, **run_record(run)},
        "series": series_for(run),
        "tables": {t.key: {"columns": t.columns, "rows": t.rows} for t in run.tables.all()},
        "figures": {f.key: f.figure for f in run.figures.all()},
        "logs": [{"level": lg.level, "message": lg.message} for lg in run.logs.all()],
    }


def series_csv(run: Run, keys: list[str] | None = None) -> str:
    """Long format: key,step,value."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["key", "step", "value"])
    for key, s in series_for(run, keys).items():
        for x, y in zip(s["x"], s["y"], strict=True):
            w.writerow([key, x, "" if y is None else y])
    return buf.getvalue()


def summary_csv(run: Run) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["name", "value"])
    for k, v in _flatten(run.summary).items():
        w.writerow([k, v])
    for k, v in _flatten(run.config, "config.").items():
        w.writerow([k, v])
    return buf.getvalue()


def table_csv(run: Run, key: str) -> str:
    t = run.tables.get(key=key)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=t.columns, extrasaction="ignore")
    w.writeheader()
    for row in t.rows:
        w.writerow({k: (json.dumps(v) if isinstance(v, (list, dict)) else v) for k, v in row.items()})
    return buf.getvalue()


def _flatten(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(_flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = json.dumps(v) if isinstance(v, list) else v
    return out


def bundle(run: Run) -> bytes:
    """A zip: run.json (config, seed, environment, summary…), chunks.json, tables, figures, logs, artifacts/."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("run.json", json.dumps({"bundle_version": BUNDLE_VERSION, **run_record(run)}, indent=1))
        z.writestr(
            "chunks.json",
            json.dumps(
                [{"key": c.key, "seq": c.seq, "steps": c.steps, "values": c.values} for c in run.chunks.order_by("seq")]
            ),
        )
        z.writestr(
            "tables.json",
            json.dumps([{"key": t.key, "columns": t.columns, "rows": t.rows, "seq": t.seq} for t in run.tables.all()]),
        )
        z.writestr(
            "figures.json", json.dumps([{"key": f.key, "figure": f.figure, "seq": f.seq} for f in run.figures.all()])
        )
        z.writestr(
            "logs.json",
            json.dumps([{"seq": lg.seq, "level": lg.level, "message": lg.message} for lg in run.logs.all()]),
        )
        for a in run.artifacts.all():
            with a.file.open("rb") as fh:
                z.writestr(f"artifacts/{a.name}", fh.read())
    return buf.getvalue()


@transaction.atomic
def import_bundle(data: bytes, owner=None) -> Run:  # type: ignore[no-untyped-def]
    """Restore a bundle as a new run on this instance (the experiment must be installed here)."""
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        rec = json.loads(z.read("run.json"))
        if rec.get("bundle_version") != BUNDLE_VERSION:
            raise ValueError(f"unsupported bundle version {rec.get('bundle_version')!r}")
        paper, _, slug = rec["experiment"].partition("/")
        exp = Experiment.objects.filter(paper__slug=paper, slug=slug).first()
        if exp is None:
            raise ValueError(f"experiment {rec['experiment']!r} is not installed on this instance")
        status = (
            rec["status"]
            if rec["status"] in (RunStatus.SUCCEEDED, RunStatus.FAILED, RunStatus.CANCELLED)
            else RunStatus.FAILED
        )
        chunks = json.loads(z.read("chunks.json"))
        run = Run.objects.create(
            experiment=exp,
            owner=owner,
            config=rec["config"],
            seed=rec["seed"],
            device_requested=rec["device_requested"],
            device=rec["device"],
            status=status,
            progress=1.0 if status == RunStatus.SUCCEEDED else 0.0,
            summary=rec["summary"],
            environment=rec["environment"],
            error=rec["error"],
            traceback=rec["traceback"],
            tags=rec["tags"],
            note=rec["note"],
            source="import",
            started_at=parse_datetime(rec["started_at"]) if rec["started_at"] else None,
            finished_at=parse_datetime(rec["finished_at"]) if rec["finished_at"] else None,
        )
        SeriesChunk.objects.bulk_create(
            [SeriesChunk(run=run, key=c["key"], seq=c["seq"], steps=c["steps"], values=c["values"]) for c in chunks]
        )
        for t in json.loads(z.read("tables.json")):
            RunTable.objects.create(run=run, key=t["key"], columns=t["columns"], rows=t["rows"], seq=t["seq"])
        for f in json.loads(z.read("figures.json")):
            RunFigure.objects.create(run=run, key=f["key"], figure=f["figure"], seq=f["seq"])
        logs = json.loads(z.read("logs.json"))
        RunLog.objects.bulk_create(
            [RunLog(run=run, seq=lg["seq"], level=lg["level"], message=lg["message"]) for lg in logs]
        )
        for name in z.namelist():
            if name.startswith("artifacts/") and not name.endswith("/"):
                blob = z.read(name)
                art = Artifact(run=run, name=name.split("/", 1)[1], size=len(blob))
                art.file.save(art.name, ContentFile(blob), save=True)
        seqs = [c["seq"] for c in chunks] + [lg["seq"] for lg in logs] + [0]
        Run.objects.filter(pk=run.pk).update(event_seq=max(seqs))
    run.refresh_from_db()
    return run
