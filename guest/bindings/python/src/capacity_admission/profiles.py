"""`WorkspaceProfiles`: each workspace's bulk share, read from a PostgreSQL table (read-only).

    profiles = WorkspaceProfiles("postgresql://svc:secret@db:5432/app", table="tenant_workload_policies")
    profiles.share("acme")     # an int: the row's share, or `default_share` without one

The whole table is loaded at once, `SELECT <workspace_column>::text, <share_column> FROM <table>`,
and answered from memory for `refresh` seconds. Each load opens one connection and closes it:
nothing is held between loads, so a restarted database or a failed-over address needs no
reconnect logic (a load every minute costs one connection a minute). The session is opened with
`default_transaction_read_only=on` and a statement timeout, and runs that one query.

A load that fails (refused, timed out, a missing table or column, no permission) keeps the last
good profiles while they are younger than `max_stale` (counted from the last good load); after
that, or when nothing was ever loaded, every workspace gets `default_share`. A failed load is
tried again at the first call after `refresh`, not on every call. Logged once each: when loads
start failing, when the defaults take over, when a load succeeds again. A row with a null,
negative, fractional or too large share, or a null workspace id, is skipped with one warning
naming the workspace and the value (again only when the value changes). A workspace with two
rows gets the smaller share, with one warning.

Thread-safe: concurrent callers share one load (the first loads, the others wait for it).
"""

from __future__ import annotations

import logging
import math
import re
import threading
import time
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Callable, Dict, List, Mapping, Optional, Set, Tuple
from urllib.parse import quote

from .redaction import MASK, redact, scrub

__all__ = ["ProfileCounters", "WorkspaceProfiles", "redact_dsn", "DEFAULT_TABLE"]

#: The table read unless configured otherwise.
DEFAULT_TABLE = "tenant_workload_policies"

_U32_MAX = 2**32 - 1
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_log = logging.getLogger("capacity_admission")


def redact_dsn(text: str, password: Optional[str] = None) -> str:
    """`text` with every secret of a connection string masked (`redaction.redact`), and
    `password` itself wherever it appears, as written or percent-encoded."""
    text = redact(text)
    if password:
        for form in {password, quote(password, safe="")}:
            text = text.replace(form, MASK)
    return text


@dataclass(frozen=True)
class ProfileCounters:
    """What the profiles have done, for a service to export as metrics."""

    #: Loads that succeeded, and loads that failed.
    loads: int
    failures: int
    #: Rows the last good load read, how many of them were skipped, and the workspaces it gave a
    #: share to.
    rows: int
    skipped_rows: int
    workspaces: int
    #: Every workspace gets `default_share` now (nothing loaded yet, or loads failing for longer
    #: than `max_stale`).
    using_defaults: bool
    #: Seconds since the last good load; None before the first.
    age_s: Optional[float]


def _identifier(key: str, value: Any, parts: int) -> List[str]:
    names = value.split(".") if isinstance(value, str) else []
    if not 1 <= len(names) <= parts or not all(_NAME.fullmatch(n) for n in names):
        shape = "`name` or `schema.name`" if parts == 2 else "a column name"
        raise ValueError(f"{key}: expected {shape}, each part matching [A-Za-z_][A-Za-z0-9_]*, got {value!r}")
    return names


def _seconds(key: str, value: Any, positive: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or value < 0 or (positive and value == 0):
        raise ValueError(f"{key}: expected {'a positive' if positive else 'a non-negative'} number of seconds, "
                         f"got {value!r}")
    return float(value)


def _share(value: Any) -> Tuple[Optional[int], str]:
    """The share a row's value gives, or None and why it is not one."""
    if value is None:
        return None, "null"
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        return None, "not a number"
    if isinstance(value, Decimal):
        if not value.is_finite() or value != value.to_integral_value():
            return None, "not a whole number"
        value = int(value)
    elif isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            return None, "not a whole number"
        value = int(value)
    if value < 0:
        return None, "negative"
    if value > _U32_MAX:
        return None, f"above {_U32_MAX}"
    return value, ""


def _show(value: Any) -> str:
    """A row's value as a log line shows it (SQL's words for null)."""
    if value is None:
        return "null"
    return str(value) if isinstance(value, (int, float, Decimal)) and not isinstance(value, bool) else repr(value)


class WorkspaceProfiles:
    """Each workspace's bulk share from `table` (`name` or `schema.name`; its `workspace_column`
    is read as text, its `share_column` must hold whole numbers). `default_share` (>= 1) answers
    a workspace without a usable row; `refresh` (seconds) is how long a load is reused;
    `max_stale` how long the last good profiles outlive failing loads; `timeout` bounds the
    connection (libpq counts whole seconds, at least 2) and the query. `clock` (monotonic
    seconds) is for tests. Bad settings raise ValueError here, naming the key; the database is
    first read at the first `share()`."""

    def __init__(
        self,
        dsn: str,
        *,
        table: str = DEFAULT_TABLE,
        workspace_column: str = "workspace_id",
        share_column: str = "bulk_share",
        default_share: int = 1,
        refresh: float = 60.0,
        max_stale: float = 600.0,
        timeout: float = 5.0,
        logger: Optional[logging.Logger] = None,
        clock: Optional[Callable[[], float]] = None,
    ) -> None:
        if not isinstance(dsn, str) or not dsn.strip():
            raise ValueError(f"dsn: expected a PostgreSQL connection string (postgresql://... or host=...), got "
                             f"{type(dsn).__name__ if dsn is not None else None}")
        try:
            import psycopg  # type: ignore[import-not-found]
            from psycopg import sql  # type: ignore[import-not-found]
            from psycopg.conninfo import conninfo_to_dict  # type: ignore[import-not-found]
        except ImportError as e:
            raise ValueError("dsn: the `psycopg` package is not installed (pip install 'psycopg[binary]')") from e
        try:
            params = conninfo_to_dict(dsn)
        except psycopg.Error as e:
            raise ValueError(f"dsn: not a PostgreSQL connection string: {scrub(str(e), dsn)}") from None
        self._password = str(params.get("password") or "") or None
        names = _identifier("table", table, 2)
        workspace = _identifier("workspace_column", workspace_column, 1)[0]
        share = _identifier("share_column", share_column, 1)[0]
        if type(default_share) is not int or not 1 <= default_share <= _U32_MAX:
            raise ValueError(f"default_share: expected a whole number from 1 to {_U32_MAX}, got {default_share!r}")
        self.default_share = default_share
        self.refresh = _seconds("refresh", refresh, positive=True)
        self.max_stale = _seconds("max_stale", max_stale, positive=False)
        self.timeout = _seconds("timeout", timeout, positive=True)
        if logger is not None and not all(callable(getattr(logger, m, None)) for m in ("info", "warning", "error")):
            raise ValueError(f"logger: expected a logging.Logger (info, warning, error), got {logger!r}")
        if clock is not None and not callable(clock):
            raise ValueError(f"clock: expected a function returning monotonic seconds, got {clock!r}")
        self.table = table
        #: How logs name the source (no password).
        self.label = f"{redact_dsn(dsn, self._password)} table {table}"
        self.workspace_column, self.share_column = workspace, share
        self._log = logger or _log
        self._clock = clock or time.monotonic
        self._connect = psycopg.connect
        self._dsn = dsn
        options = " ".join(filter(None, [str(params.get("options") or ""), "-c default_transaction_read_only=on",
                                         f"-c statement_timeout={max(1, round(self.timeout * 1000))}"]))
        self._connect_args: Dict[str, Any] = {"options": options, "connect_timeout": max(1, math.ceil(self.timeout)),
                                              "autocommit": True}
        if "application_name" not in params:
            self._connect_args["application_name"] = "capacity_admission"
        self._query = sql.SQL("SELECT {}::text, {} FROM {}").format(
            sql.Identifier(workspace), sql.Identifier(share), sql.Identifier(*names))
        self._lock = threading.Lock()
        self._closed = False
        self._due = -math.inf          # when (clock) the next load is to be tried
        self._shares: Mapping[str, int] = {}
        self._loaded_at: Optional[float] = None
        self._failing_since: Optional[float] = None
        self._defaults_logged = False
        self._warned: Set[Tuple[Optional[str], str]] = set()
        self._loads = self._failures = self._rows = self._skipped = 0

    def share(self, workspace: str) -> int:
        """The workspace's share: its row's, or `default_share` (no row, a skipped row, or the
        profiles unreadable for longer than `max_stale`). Never raises for a database problem
        (RuntimeError once closed)."""
        if not isinstance(workspace, str):
            raise TypeError(f"workspace: expected a str, got {type(workspace).__name__}")
        if self._closed:
            raise RuntimeError("the WorkspaceProfiles is closed")
        if self._clock() >= self._due:
            with self._lock:
                if self._closed:
                    raise RuntimeError("the WorkspaceProfiles is closed")
                now = self._clock()
                if now >= self._due:
                    self._reload(now)
        return self._current().get(workspace, self.default_share)

    def counters(self) -> ProfileCounters:
        """A snapshot of the counters."""
        loaded_at = self._loaded_at
        return ProfileCounters(
            loads=self._loads, failures=self._failures, rows=self._rows, skipped_rows=self._skipped,
            workspaces=len(self._shares), using_defaults=self._stale(self._clock()),
            age_s=None if loaded_at is None else self._clock() - loaded_at)

    def close(self) -> None:
        """No connection is held between loads: this waits for a load in flight and refuses
        further calls."""
        self._closed = True
        with self._lock:
            self._shares = {}

    def __enter__(self) -> "WorkspaceProfiles":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _stale(self, now: float) -> bool:
        """Every workspace gets the default: nothing was ever loaded, or loads have failed and
        the last good profiles are `max_stale` old."""
        loaded_at = self._loaded_at
        return loaded_at is None or (self._failing_since is not None and now - loaded_at >= self.max_stale)

    def _current(self) -> Mapping[str, int]:
        shares = self._shares
        if self._failing_since is None or not self._stale(self._clock()):
            return shares
        if not self._defaults_logged:
            with self._lock:
                if not self._defaults_logged and self._failing_since is not None and self._loaded_at is not None:
                    self._defaults_logged = True
                    now = self._clock()
                    self._log.warning(
                        "workspace profiles from %s still cannot be read after %.0f s: the last good ones are "
                        "%.0f s old (max_stale %g s); every workspace gets the default share %d until they can be "
                        "read", self.label, now - self._failing_since, now - self._loaded_at, self.max_stale,
                        self.default_share)
        return {}

    def _reload(self, now: float) -> None:
        # Callers arriving during the load see it due and wait for it on the lock. A failed load
        # too is tried again only after `refresh`.
        try:
            with self._connect(self._dsn, **self._connect_args) as conn:
                rows = conn.execute(self._query).fetchall()
        except Exception as e:  # refused, timed out, no table, no permission: a failed load, not a crash
            self._due = now + self.refresh
            self._failures += 1
            if self._failing_since is None:
                self._failing_since = now
                why = redact_dsn(" ".join(f"{type(e).__name__}: {e}".split()), self._password)
                if self._loaded_at is None:
                    self._defaults_logged = True
                    self._log.warning("workspace profiles from %s cannot be read (%s): every workspace gets the "
                                      "default share %d until they can be read", self.label, why, self.default_share)
                else:
                    self._log.warning("workspace profiles from %s cannot be read (%s): keeping the ones loaded "
                                      "%.0f s ago for up to %g s after that load", self.label, why,
                                      now - self._loaded_at, self.max_stale)
            return
        shares = self._accept(rows)
        self._loads += 1
        self._due = now + self.refresh
        if self._failing_since is not None:
            self._log.info("workspace profiles from %s read again after %.0f s of failed loads: %d workspaces",
                           self.label, now - self._failing_since, len(shares))
        self._shares, self._loaded_at = shares, now
        self._failing_since, self._defaults_logged = None, False

    def _accept(self, rows: List[Tuple[Any, Any]]) -> Dict[str, int]:
        shares: Dict[str, int] = {}
        duplicates: Dict[str, List[int]] = {}
        bad: List[Tuple[Optional[str], Any, str]] = []
        for workspace, value in rows:
            share, why = _share(value)
            if workspace is None or share is None:
                bad.append((workspace, value, why))
            elif workspace in shares:
                duplicates.setdefault(workspace, [shares[workspace]]).append(share)
                shares[workspace] = min(shares[workspace], share)
            else:
                shares[workspace] = share
        # Each problem once, by (workspace, what): logged when it appears, not at every load.
        problems: Dict[Tuple[Optional[str], str], str] = {}
        for workspace, value, why in bad:
            if workspace is None:
                problems[(None, _show(value))] = f"a row with a null {self.workspace_column} (share {_show(value)}) is skipped"
                continue
            reason = "" if value is None else f" ({why})"
            then = (f"its other row's share {shares[workspace]} is used" if workspace in shares
                    else f"the workspace gets the default share {self.default_share}")
            problems[(workspace, _show(value))] = (
                f"workspace {workspace!r}: {self.share_column} is {_show(value)}{reason}; the row is skipped and {then}")
        for workspace, values in duplicates.items():
            problems[(workspace, f"rows {sorted(values)}")] = (
                f"workspace {workspace!r} has {len(values)} rows (shares {sorted(values)}); the smallest, "
                f"{shares[workspace]}, is used")
        for key in sorted(set(problems) - self._warned, key=lambda k: (k[0] is not None, k[0] or "", k[1])):
            self._log.warning("workspace profiles in %s: %s", self.table, problems[key])
        self._warned = set(problems)  # a problem fixed and back is logged again
        self._rows, self._skipped = len(rows), len(bad)
        return shares
