"""Reading the bulk factor from the sentinel's published state document (docs/behaviour.md §7).

The document is JSON with `factors.bulk` among `state`, `factors`, `decided_at`, `policy`,
`pinned`, `cause` and `sequence`. The sentinel publishes it to a Redis key and to an SSM
parameter; tests and single hosts may read a file. `read_bulk_factor` never raises for a
failed read: it returns `FactorReading(factor=None, error=...)`, and passing that `None` on to
`resolve_budget` or `plan` makes the component use full capacity and report
`factor_read_failed` (docs/behaviour.md §9). Only the component decides what a factor means: a
number outside [0, 1] is passed on as read.

Sources, told apart by their form:
- `redis://...` or `rediss://...`: a Redis URL; the key is `key` (default `capacity:state`,
  the sentinel's default). Needs the `redis` package.
- `ssm:NAME` (e.g. `ssm:/capacity/state`): an AWS SSM parameter; endpoint, region and
  credentials come from the standard AWS chain (`AWS_ENDPOINT_URL_SSM` included). Needs `boto3`.
- anything else (optionally `file:PATH`): a file path.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Optional

__all__ = ["FactorReading", "read_bulk_factor", "DEFAULT_REDIS_KEY"]

#: The key the sentinel publishes to unless configured otherwise.
DEFAULT_REDIS_KEY = "capacity:state"


@dataclass(frozen=True)
class FactorReading:
    """The outcome of one read of the published state."""

    #: `factors.bulk` as published; None when it could not be read.
    factor: Optional[float]
    #: Why the read failed (diagnostic only); None when it succeeded.
    error: Optional[str]
    #: The source as given.
    source: str
    #: The document's `state`, `sequence` and `decided_at`, when it was read.
    state: Optional[str] = None
    sequence: Optional[int] = None
    decided_at: Optional[str] = None

    @property
    def failed(self) -> bool:
        return self.factor is None


def read_bulk_factor(source: str, *, key: str = DEFAULT_REDIS_KEY, timeout: float = 2.0) -> FactorReading:
    """Reads `factors.bulk` from the published state document at `source` (see the module
    docstring for the forms). Never raises for an unreadable source: the failure is in the
    returned `FactorReading.error` and its `factor` is None. `timeout` bounds a network read
    (seconds, for connecting and for the answer)."""
    try:
        text = _fetch(source, key, timeout)
    except _ReadFailure as e:
        return FactorReading(None, str(e), source)
    except Exception as e:  # any client library's failure is a failed read, not a crash
        return FactorReading(None, f"reading {source}: {type(e).__name__}: {e}", source)
    return parse_document(text, source)


def parse_document(text: Any, source: str = "<document>") -> FactorReading:
    """`factors.bulk` of one state document (str or bytes)."""
    try:
        doc = json.loads(text)
    except (ValueError, TypeError) as e:
        return FactorReading(None, f"{source}: not a JSON state document: {e}", source)
    if not isinstance(doc, dict):
        return FactorReading(None, f"{source}: the state document is not a JSON object", source)
    factors = doc.get("factors")
    bulk = factors.get("bulk") if isinstance(factors, dict) else None
    if isinstance(bulk, bool) or not isinstance(bulk, (int, float)):
        return FactorReading(None, f"{source}: the state document has no numeric factors.bulk", source)
    sequence = doc.get("sequence")
    return FactorReading(
        factor=float(bulk),
        error=None,
        source=source,
        state=doc.get("state") if isinstance(doc.get("state"), str) else None,
        sequence=sequence if isinstance(sequence, int) and not isinstance(sequence, bool) else None,
        decided_at=doc.get("decided_at") if isinstance(doc.get("decided_at"), str) else None,
    )


class _ReadFailure(Exception):
    pass


def _fetch(source: str, key: str, timeout: float) -> Any:
    if source.startswith(("redis://", "rediss://", "unix://")):
        return _fetch_redis(source, key, timeout)
    if source.startswith("ssm:"):
        return _fetch_ssm(source[len("ssm:"):], timeout)
    path = source[len("file:"):] if source.startswith("file:") else source
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise _ReadFailure(f"reading {path}: {e.strerror or e}") from e


def _fetch_redis(url: str, key: str, timeout: float) -> Any:
    try:
        import redis  # type: ignore[import-not-found]
    except ImportError as e:
        raise _ReadFailure(f"reading {url}: the `redis` package is not installed (pip install redis)") from e
    client = redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)
    try:
        value = client.get(key)
    finally:
        client.close()
    if value is None:
        raise _ReadFailure(f"reading {url}: no key {key} (absent or expired)")
    return value


def _fetch_ssm(name: str, timeout: float) -> Any:
    if not name:
        raise _ReadFailure("ssm: needs a parameter name, e.g. ssm:/capacity/state")
    try:
        import boto3  # type: ignore[import-not-found]
        from botocore.config import Config  # type: ignore[import-not-found]
    except ImportError as e:
        raise _ReadFailure(f"reading SSM parameter {name}: `boto3` is not installed (pip install boto3)") from e
    config = Config(connect_timeout=timeout, read_timeout=timeout, retries={"max_attempts": 1, "mode": "standard"})
    client = boto3.client("ssm", config=config)
    try:
        return client.get_parameter(Name=name)["Parameter"]["Value"]
    except client.exceptions.ParameterNotFound as e:
        raise _ReadFailure(f"reading SSM parameter {name}: not found") from e
