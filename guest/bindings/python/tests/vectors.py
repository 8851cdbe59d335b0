"""The shared vectors (tests/vectors): reading them, a package result in their serde form, and a
field-by-field comparison."""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Dict, List, Tuple

from conftest import VECTORS


def cases(kind: str) -> List[Tuple[str, Dict[str, Any]]]:
    files = sorted((VECTORS / kind).glob("*.json"))
    assert files, f"no vectors under {VECTORS / kind}"
    found = []
    for file in files:
        for case in json.loads(file.read_text()):
            assert case.get("expected") is not None, f"{file.name} case {case['name']}: not blessed"
            found.append((f"{kind}/{file.name}::{case['name']}", case))
    return found


def differences(expected: Any, actual: Any, at: str = "") -> List[str]:
    """Each differing field, as `path: expected X, got Y`."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        out = []
        for key in sorted(set(expected) | set(actual)):
            out += differences(expected.get(key), actual.get(key), f"{at}.{key}" if at else key)
        return out
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        return [d for i, (e, a) in enumerate(zip(expected, actual)) for d in differences(e, a, f"{at}[{i}]")]
    return [] if expected == actual else [f"{at or '.'}: expected {expected!r}, got {actual!r}"]


def serde(value: Any) -> Any:
    """A package dataclass in the vectors' serde form (enum cases by their WIT names)."""
    if dataclasses.is_dataclass(value):
        return {f.name: serde(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list):
        return [serde(v) for v in value]
    if hasattr(value, "value") and isinstance(value.value, str):  # an AdmissionOutcome
        return value.value
    return value


def check(expected: Any, actual: Any) -> None:
    diffs = differences(expected, actual)
    assert not diffs, "\n".join(diffs)
