"""Converts between the vectors' serde form and wasmtime-py component values, guided by the
component's own types (so no WIT type is written out here).

The serde form (tests/vectors/README.md): record fields in snake case, enum cases by their WIT
names (`"wait-cluster-full"`), variants externally tagged (`{"reading": {...}}`), options null.
The WIT form: kebab-case fields, the same case names, `Record` objects, `None`, and
`Variant(tag, payload)` or the bare payload for a variant whose cases have distinct Python types
(wasmtime-py's rule).
"""

from typing import Any

from wasmtime import component as wc


def to_wit(ty: Any, value: Any) -> Any:
    if isinstance(ty, wc.RecordType):
        record = wc.Record()
        for name, field_ty in ty.fields:
            key = name.replace("-", "_")
            if key not in value:  # a field the vector leaves out has serde's default
                setattr(record, name, None if isinstance(field_ty, wc.OptionType) else False)
                continue
            setattr(record, name, to_wit(field_ty, value[key]))
        return record
    if isinstance(ty, wc.ListType):
        return [to_wit(ty.element, v) for v in value]
    if isinstance(ty, wc.OptionType):
        return None if value is None else to_wit(ty.payload, value)
    if isinstance(ty, wc.EnumType):
        return value
    if isinstance(ty, wc.VariantType):
        (tag, payload), = value.items() if isinstance(value, dict) else [(value, None)]
        cases = dict(ty.cases)
        case = tag
        converted = None if cases[case] is None else to_wit(cases[case], payload)
        return wc.Variant(case, converted) if ty._tagged() else converted
    if isinstance(ty, (wc.F64, wc.F32)):
        return float(value)
    if isinstance(ty, (wc.U8, wc.U16, wc.U32, wc.U64, wc.S8, wc.S16, wc.S32, wc.S64, wc.Bool, wc.String)):
        return value
    raise NotImplementedError(f"no serde conversion for {type(ty).__name__}")


def from_wit(ty: Any, value: Any) -> Any:
    if isinstance(ty, wc.RecordType):
        return {name.replace("-", "_"): from_wit(t, getattr(value, name)) for name, t in ty.fields}
    if isinstance(ty, wc.ListType):
        return [from_wit(ty.element, v) for v in value]
    if isinstance(ty, wc.OptionType):
        return None if value is None else from_wit(ty.payload, value)
    if isinstance(ty, wc.EnumType):
        return value
    if isinstance(ty, wc.VariantType):
        if ty._tagged():
            tag, payload = value.tag, value.payload
        else:
            tag, payload = _untagged_case(ty, value)
        case_ty = dict(ty.cases)[tag]
        return tag if case_ty is None else {tag: from_wit(case_ty, payload)}
    return value


def _untagged_case(ty: Any, value: Any) -> Any:
    for name, case_ty in ty.cases:
        if case_ty is None and value is None:
            return name, None
        if case_ty is not None:
            classes: set = set()
            case_ty.add_classes(classes)
            if isinstance(value, tuple(classes)):
                return name, value
    raise ValueError(f"{value!r} matches no case of the variant")
