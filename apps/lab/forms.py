"""Django forms derived from an experiment's declared parameters (one source of truth)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.models import User

from . import declare as d
from .services import DEVICES


def _field(p: d.Param) -> forms.Field:
    common: dict[str, Any] = {"label": p.label, "help_text": p.help, "initial": p.default}
    if isinstance(p, d.Bool):
        return forms.BooleanField(required=False, **common)
    if isinstance(p, d.Choice):
        return forms.ChoiceField(choices=[(str(v), lab) for v, lab in p.choices], **common)
    if isinstance(p, d.Int):
        return forms.IntegerField(min_value=p.min, max_value=p.max, **common)
    if isinstance(p, d.Float):
        attrs = {"step": "any"}
        return forms.FloatField(min_value=p.min, max_value=p.max, widget=forms.NumberInput(attrs=attrs), **common)
    if isinstance(p, d.FloatList):
        common["initial"] = ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in p.default)
        bound = f" Each in [{p.min:g}, {p.max:g}]." if p.min is not None and p.max is not None else ""
        common["help_text"] = f"{p.help} Comma-separated, {p.min_len}–{p.max_len} values.{bound}".strip()
        return forms.CharField(**common)
    if isinstance(p, d.Str):
        return forms.CharField(max_length=p.max_length, required=False, **common)
    raise TypeError(f"no form field for {type(p).__name__}")


def experiment_form_class(decl: d.Experiment) -> type[forms.Form]:
    """A Form with one field per parameter (+ seed, device); ``clean`` runs the declaration's validation."""
    fields: dict[str, forms.Field] = {p.name: _field(p) for p in decl.params}
    fields["seed"] = forms.IntegerField(
        min_value=0, max_value=2**31 - 1, initial=0, help_text="Random seed (same seed + config → same result on CPU)."
    )
    fields["device"] = forms.ChoiceField(
        choices=[(x, x) for x in DEVICES], initial="auto", help_text="auto: CUDA when torch sees one, else CPU."
    )

    def clean(self: forms.Form) -> dict[str, Any]:
        data = forms.Form.clean(self)
        values = {p.name: data[p.name] for p in decl.params if p.name in data}
        try:
            self.config = decl.validate(values)
        except d.ValidationError as exc:
            for name, msg in exc.errors.items():
                self.add_error(name if name in self.fields else None, msg)
        return data

    attrs: dict[str, Any] = dict(fields)
    attrs["clean"] = clean
    attrs["declaration"] = decl
    return type(f"{decl.slug.title().replace('_', '')}Form", (forms.Form,), attrs)


class SignupForm(UserCreationForm):
    class Meta:
        model = User
        fields = ("username",)
