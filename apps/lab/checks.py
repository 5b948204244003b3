"""System checks (`manage.py check`): every declaration's compute entry point imports and is callable."""

from django.core import checks


@checks.register()
def experiments_are_runnable(app_configs, **kwargs):  # type: ignore[no-untyped-def]
    from .registry import registry

    errors = []
    for exp in registry.experiments.values():
        try:
            fn = exp.load()
        except Exception as exc:  # noqa: BLE001 - any import failure is a declaration error
            errors.append(checks.Error(f"{exp.id}: compute {exp.compute!r} does not import: {exc}", id="lab.E001"))
            continue
        if not callable(fn):
            errors.append(checks.Error(f"{exp.id}: compute {exp.compute!r} is not callable", id="lab.E002"))
        if "smoke" not in exp.presets:
            errors.append(checks.Warning(f"{exp.id}: no 'smoke' preset", id="lab.W001"))
    return errors
