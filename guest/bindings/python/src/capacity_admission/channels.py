"""The two channels the sentinel publishes its state document to (docs/behaviour.md §7), as a
reader sees them: one long-lived client per channel, a read that never raises.

A channel is named by its form:
- `redis://...`, `rediss://...` or `unix://...`: a Redis URL; the document is the value of a key
  (the sentinel's default `capacity:state`). Needs the `redis` package.
- `ssm:NAME` (e.g. `ssm:/capacity/state`): an AWS SSM parameter; endpoint, region and
  credentials come from the standard AWS chain (`AWS_ENDPOINT_URL_SSM` included). Needs `boto3`.
- anything else (optionally `file:PATH`): a file, as the embedded default writes them.

`fetch()` answers `("document", text)` or `("failed", why)`; judging the document (parse, range,
age) is the admission component's `choose-factor`, not the channel's.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

from .redaction import redact as _redact

__all__ = ["Channel", "open_channel", "redact"]

#: The outcome of one fetch: ("document", text) or ("failed", why).
Fetched = Tuple[str, str]

#: The largest document a channel reads (the sentinel's is under 1 KiB; an SSM parameter holds
#: at most 8 KiB): a larger value is a failed read, never loaded whole.
MAX_DOCUMENT = 64 * 1024


def _too_large() -> "_ReadFailure":
    return _ReadFailure(f"the value is larger than {MAX_DOCUMENT // 1024} KiB, so it is not a state document")


def redact(spec: str) -> str:
    """The channel as logs may show it: every secret masked (`redaction.redact`: a URL's
    password, a `password=` in its query, a fragment)."""
    return _redact(spec)


class Channel:
    """One configured channel. `fetch` is safe to call from many threads at once."""

    def __init__(self, spec: str) -> None:
        self.spec = spec
        #: How logs name it (no secret).
        self.label = redact(spec)

    def fetch(self) -> Fetched:
        try:
            return ("document", self._fetch())
        except _ReadFailure as e:
            return ("failed", str(e))
        except Exception as e:  # any client library's failure is a failed read, not a crash
            return ("failed", f"{type(e).__name__}: {e}")

    def _fetch(self) -> str:
        raise NotImplementedError

    def close(self) -> None:
        pass


class _ReadFailure(Exception):
    pass


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError as e:
            raise _ReadFailure(f"the value is not UTF-8 ({e})") from e
    return str(value)


class RedisChannel(Channel):
    def __init__(self, spec: str, key: str, timeout: float) -> None:
        super().__init__(spec)
        try:
            import redis  # type: ignore[import-not-found]
        except ImportError as e:
            raise ValueError(f"cache {self.label}: the `redis` package is not installed (pip install redis)") from e
        self.key = key
        # One client and its connection pool for the reader's life: connections are reused and
        # a dropped one is replaced on the next read.
        self._client = redis.Redis.from_url(spec, socket_timeout=timeout, socket_connect_timeout=timeout,
                                            retry_on_timeout=False)

    def _fetch(self) -> str:
        # GETRANGE bounds what comes over the network; a missing key reads as empty (the
        # sentinel never publishes an empty value).
        value = self._client.getrange(self.key, 0, MAX_DOCUMENT)
        if not value:
            raise _ReadFailure(f"no key {self.key} (absent or expired)")
        if len(value) > MAX_DOCUMENT:
            raise _too_large()
        return _text(value)

    def close(self) -> None:
        self._client.close()


class SsmChannel(Channel):
    def __init__(self, spec: str, timeout: float) -> None:
        super().__init__(spec)
        self.name = spec[len("ssm:"):]
        if not self.name:
            raise ValueError("ssm: needs a parameter name, e.g. ssm:/capacity/state")
        try:
            import boto3  # type: ignore[import-not-found]
            from botocore.config import Config  # type: ignore[import-not-found]
        except ImportError as e:
            raise ValueError(f"parameter {spec}: `boto3` is not installed (pip install boto3)") from e
        config = Config(connect_timeout=timeout, read_timeout=timeout, retries={"max_attempts": 1, "mode": "standard"})
        # boto3 clients are thread-safe; one keeps its connection pool.
        try:
            self._client = boto3.client("ssm", config=config)
        except Exception as e:  # no region, a broken profile: a setting to fix, said now
            raise ValueError(f"parameter {spec}: cannot create the SSM client: {e} "
                             "(set AWS_DEFAULT_REGION or configure a profile)") from e

    def _fetch(self) -> str:
        try:
            return self._client.get_parameter(Name=self.name)["Parameter"]["Value"]
        except self._client.exceptions.ParameterNotFound as e:
            raise _ReadFailure(f"parameter {self.name} not found") from e

    def close(self) -> None:
        self._client.close()


class FileChannel(Channel):
    def __init__(self, spec: str) -> None:
        super().__init__(spec)
        self.path = spec[len("file:"):] if spec.startswith("file:") else spec
        if not self.path:
            raise ValueError("file: needs a path, e.g. file:/var/lib/sentinel/cache.json")

    def _fetch(self) -> str:
        try:
            with open(self.path, "rb") as f:
                value = f.read(MAX_DOCUMENT + 1)
        except OSError as e:
            raise _ReadFailure(f"reading {self.path}: {e.strerror or e}") from e
        if len(value) > MAX_DOCUMENT:
            raise _too_large()
        return _text(value)


def open_channel(spec: Optional[str], key: str, timeout: float) -> Optional[Channel]:
    """The channel named by `spec` (None when not configured). Raises ValueError for a spec
    that cannot work (an empty name, a missing client library)."""
    if spec is None:
        return None
    if not isinstance(spec, str) or not spec:
        raise ValueError(f"a channel is a Redis URL, ssm:NAME or a file path, not {spec!r}")
    if spec.startswith(("redis://", "rediss://", "unix://")):
        return RedisChannel(spec, key, timeout)
    if spec.startswith("ssm:"):
        return SsmChannel(spec, timeout)
    return FileChannel(spec)
