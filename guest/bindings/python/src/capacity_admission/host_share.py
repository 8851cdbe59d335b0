"""One call to the parameter per host (docs/behaviour.md §9.1, "At fleet scale").

A service often runs many processes on one host (gunicorn or uWSGI workers, a Celery pool), each
with its own reader: without sharing, a host of 32 workers calls the parameter 32 times where
one call would do. With `parameter_share=DIR` (a folder on the host every process of the
service can write, e.g. `/run/capacity-admission`), a process that needs the parameter takes an
exclusive lock on `DIR/parameter-KEY.lock` (`fcntl.flock`: released by the kernel when a process
dies, so a crash leaves no stale lock), and uses the answer another process wrote to
`DIR/parameter-KEY.json` when it is younger than the reader's `parameter_refresh`; only
otherwise does it call the parameter, and writes what it got (a document or a failure) for the
others, whole (a temporary file renamed over it). KEY is a digest of the parameter's name, so
readers of different parameters share nothing. A share that cannot be used (the folder is not
writable, the file is damaged) is not an error: the reader calls the parameter itself.

The Node package has no such option: Node's standard library has no advisory file lock, and a
lock made of an exclusively created file would be left behind by a process that dies holding it.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import time
from pathlib import Path
from typing import Callable, Optional

from .channels import Channel, Fetched

__all__ = ["HostShare"]


class HostShare:
    """The parameter's last answer, shared by the processes of one host through a locked file."""

    def __init__(self, directory: str, spec: str, clock: Callable[[], float] = time.time) -> None:
        if not isinstance(directory, str) or not directory:
            raise ValueError(f"parameter_share: expected the path of a folder on this host, got {directory!r}")
        folder = Path(directory)
        if not folder.is_dir():
            raise ValueError(f"parameter_share: {directory} is not a folder (create it, writable by every process of the service)")
        key = hashlib.sha256(spec.encode("utf-8")).hexdigest()[:16]
        self.path = folder / f"parameter-{key}.json"
        self._lock_path = folder / f"parameter-{key}.lock"
        self._clock = clock

    def _shared(self, younger_than: float) -> Optional[Fetched]:
        try:
            shared = json.loads(self.path.read_text(encoding="utf-8"))
            at, tag, text = float(shared["at"]), shared["tag"], shared["text"]
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if tag not in ("document", "failed") or not isinstance(text, str):
            return None
        age = self._clock() - at
        return (tag, text) if 0 <= age < younger_than else None

    def _write(self, fetched: Fetched) -> None:
        partial = self.path.with_name(f".{self.path.name}.{os.getpid()}.partial")
        try:
            partial.write_text(json.dumps({"at": self._clock(), "tag": fetched[0], "text": fetched[1]}), encoding="utf-8")
            os.replace(partial, self.path)
        except OSError:
            partial.unlink(missing_ok=True)

    def fetch(self, channel: Channel, younger_than: float) -> "tuple[Fetched, bool]":
        """The answer another process got less than `younger_than` seconds ago, or this
        process's own call (then shared); and whether this process called."""
        try:
            lock = open(self._lock_path, "a+")  # noqa: SIM115 (held across the call below)
        except OSError:
            return channel.fetch(), True
        with lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX)
            except OSError:
                return channel.fetch(), True
            shared = self._shared(younger_than)
            if shared is not None:
                return shared, False
            fetched = channel.fetch()
            self._write(fetched)
            return fetched, True
