"""Elicitation forms: what an upstream may ask the human to fill in, checked against the spec, and the answer
checked against the form. Pure pydantic; the window imports it to draw the form.

An elicitation's ``requestedSchema`` (MCP 2025-11-25) is a flat object of primitive fields: strings (with
``minLength``, ``maxLength`` and a ``format`` of email, uri, date or date-time), numbers and integers (with
``minimum`` and ``maximum``), booleans, single-select enums (``enum``, with ``enumNames`` or as ``oneOf`` of
``const``/``title``), and multi-select arrays of such choices; each may have a title, a description and a
default. Anything else (nesting, ``$ref``, other keywords) is outside the spec: such a form is refused with the
reason and shown to nobody.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

__all__ = ["Choice", "FormField", "FormSchema", "FormError", "check_answer", "parse_form"]


class FormError(ValueError):
    """A form outside the spec, or an answer that does not fill it in."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)


class Choice(_Strict):
    const: str
    title: str | None = None


class _ChoiceItems(_Strict):
    type: Literal["string"] | None = None
    enum: list[str] | None = None
    any_of: list[Choice] | None = Field(default=None, alias="anyOf")


class FormField(_Strict):
    """One field of a form, as the spec allows it."""

    type: Literal["string", "number", "integer", "boolean", "array"]
    title: str | None = None
    description: str | None = None
    default: str | int | float | bool | list[str] | None = None
    min_length: Annotated[int, Field(ge=0)] | None = Field(default=None, alias="minLength")
    max_length: Annotated[int, Field(ge=0)] | None = Field(default=None, alias="maxLength")
    format: Literal["email", "uri", "date", "date-time"] | None = None
    minimum: float | None = None
    maximum: float | None = None
    enum: list[str] | None = None
    enum_names: list[str] | None = Field(default=None, alias="enumNames")
    one_of: list[Choice] | None = Field(default=None, alias="oneOf")
    items: _ChoiceItems | None = None
    min_items: Annotated[int, Field(ge=0)] | None = Field(default=None, alias="minItems")
    max_items: Annotated[int, Field(ge=0)] | None = Field(default=None, alias="maxItems")

    @model_validator(mode="after")
    def _shape(self) -> FormField:
        string_only = (self.min_length, self.max_length, self.format, self.enum, self.one_of, self.enum_names)
        if self.type != "string" and any(value is not None for value in string_only):
            raise ValueError(f"a {self.type} field takes no string keywords (minLength, format, enum...)")
        if self.type not in ("number", "integer") and (self.minimum is not None or self.maximum is not None):
            raise ValueError(f"a {self.type} field takes no minimum or maximum")
        if self.type == "array":
            if self.items is None or not (self.items.enum or self.items.any_of):
                raise ValueError("an array field is a multi-select: items must list its choices (enum or anyOf)")
        elif self.items is not None or self.min_items is not None or self.max_items is not None:
            raise ValueError(f"a {self.type} field takes no items, minItems or maxItems")
        if self.enum_names is not None and (self.enum is None or len(self.enum_names) != len(self.enum)):
            raise ValueError("enumNames must name each value of enum, in order")
        if self.enum is not None and self.one_of is not None:
            raise ValueError("a field lists its choices once: enum or oneOf")
        return self

    def choices(self) -> list[Choice] | None:
        """The choices of a select field (single or multiple), with their titles; None for a free field."""
        if self.one_of is not None:
            return list(self.one_of)
        if self.enum is not None:
            names: list[str | None] = [*self.enum_names] if self.enum_names else [None] * len(self.enum)
            return [Choice(const=value, title=name) for value, name in zip(self.enum, names, strict=True)]
        if self.items is not None:
            if self.items.any_of is not None:
                return list(self.items.any_of)
            return [Choice(const=value) for value in self.items.enum or []]
        return None


class FormSchema(_Strict):
    """A whole form: flat fields, some required."""

    type: Literal["object"]
    properties: dict[str, FormField]
    required: list[str] = Field(default_factory=list)
    schema_: str | None = Field(default=None, alias="$schema")

    @model_validator(mode="after")
    def _required_exist(self) -> FormSchema:
        unknown = [name for name in self.required if name not in self.properties]
        if unknown:
            raise ValueError(f"required names fields the form does not have: {', '.join(unknown)}")
        return self


def parse_form(schema: Any) -> FormSchema:
    """The form an upstream asks for, or :class:`FormError` saying why it is outside the spec."""
    try:
        return FormSchema.model_validate(schema)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the form"
        raise FormError(f"the form is outside the MCP elicitation spec: {where}: {first['msg']}") from None


_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def check_answer(form: FormSchema, content: dict[str, Any]) -> dict[str, Any]:
    """``content`` if it fills in ``form`` (every required field, each value of its field's type and limits),
    else :class:`FormError` naming the field."""
    unknown = sorted(set(content) - set(form.properties))
    if unknown:
        raise FormError(f"the form has no field {unknown[0]}")
    for name in form.required:
        if content.get(name) in (None, "", []):
            raise FormError(f"{name} is required")
    for name, value in content.items():
        _check_value(name, form.properties[name], value)
    return content


def _check_value(name: str, field: FormField, value: Any) -> None:
    choices = field.choices()
    if field.type == "boolean":
        if not isinstance(value, bool):
            raise FormError(f"{name} is yes or no")
    elif field.type in ("number", "integer"):
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or (field.type == "integer" and not float(value).is_integer())
        ):
            raise FormError(f"{name} is {'a whole number' if field.type == 'integer' else 'a number'}")
        if field.minimum is not None and value < field.minimum:
            raise FormError(f"{name} is at least {field.minimum:g}")
        if field.maximum is not None and value > field.maximum:
            raise FormError(f"{name} is at most {field.maximum:g}")
    elif field.type == "array":
        allowed = {choice.const for choice in choices or []}
        if not isinstance(value, list) or any(item not in allowed for item in value):
            raise FormError(f"{name} is some of: {', '.join(sorted(allowed))}")
        if field.min_items is not None and len(value) < field.min_items:
            raise FormError(f"{name}: choose at least {field.min_items}")
        if field.max_items is not None and len(value) > field.max_items:
            raise FormError(f"{name}: choose at most {field.max_items}")
    else:
        if not isinstance(value, str):
            raise FormError(f"{name} is text")
        if choices is not None and value not in {choice.const for choice in choices}:
            raise FormError(f"{name} is one of: {', '.join(choice.const for choice in choices)}")
        if field.min_length is not None and len(value) < field.min_length:
            raise FormError(f"{name} has at least {field.min_length} characters")
        if field.max_length is not None and len(value) > field.max_length:
            raise FormError(f"{name} has at most {field.max_length} characters")
        _check_format(name, field.format, value)


def _check_format(name: str, format: str | None, value: str) -> None:
    try:
        if format == "email" and not _EMAIL.match(value):
            raise ValueError
        if format == "uri" and not re.match(r"^[A-Za-z][A-Za-z0-9+.\-]*:\S+$", value):
            raise ValueError
        if format == "date":
            date.fromisoformat(value)
        if format == "date-time":
            datetime.fromisoformat(value)
    except ValueError:
        raise FormError(f"{name} is not a valid {format}") from None
