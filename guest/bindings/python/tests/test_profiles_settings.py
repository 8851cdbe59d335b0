"""WorkspaceProfiles' settings, checked when it is built (no server needed), and how a
connection string is redacted for the logs."""

from __future__ import annotations

import sys

import pytest

from capacity_admission import WorkspaceProfiles
from capacity_admission.profiles import redact_dsn


@pytest.mark.parametrize("options,error,key", [
    ({"default_share": 0}, ValueError, "default_share"),
    ({"default_share": -1}, ValueError, "default_share"),
    ({"default_share": 1.5}, ValueError, "default_share"),
    ({"default_share": True}, ValueError, "default_share"),
    ({"default_share": 2**32}, ValueError, "default_share"),
    ({"table": "x; drop"}, ValueError, "table"),
    ({"table": "a.b.c"}, ValueError, "table"),
    ({"table": ""}, ValueError, "table"),
    ({"table": "1abc"}, ValueError, "table"),
    ({"table": "t\n"}, ValueError, "table"),
    ({"workspace_column": "bad col"}, ValueError, "workspace_column"),
    ({"share_column": 'x"y'}, ValueError, "share_column"),
    ({"share_column": "s.t"}, ValueError, "share_column"),
    ({"refresh": 0}, ValueError, "refresh"),
    ({"refresh": float("nan")}, ValueError, "refresh"),
    ({"max_stale": -1}, ValueError, "max_stale"),
    ({"timeout": 0}, ValueError, "timeout"),
    ({"timeout": float("inf")}, ValueError, "timeout"),
    ({"dsn": ""}, ValueError, "dsn"),
    ({"dsn": None}, ValueError, "dsn"),
    ({"dsn": "host='unclosed password=Pw-Abc"}, ValueError, "dsn"),
    ({"logger": "log"}, ValueError, "logger"),
    ({"clock": 5}, ValueError, "clock"),
    ({"colour": "blue"}, TypeError, "colour"),
])
def test_bad_settings_are_refused_naming_the_key(psycopg_installed, options, error, key):
    options = {"dsn": "postgresql://svc:Pw-Abc@127.0.0.1:1/postgres", **options}
    with pytest.raises(error, match=key) as refused:
        WorkspaceProfiles(**options)
    assert "Pw-Abc" not in str(refused.value)


def test_settings_after_the_dsn_are_keywords(psycopg_installed):
    with pytest.raises(TypeError):
        WorkspaceProfiles("postgresql://svc@127.0.0.1/postgres", "tenant_workload_policies")  # type: ignore[misc]


@pytest.mark.parametrize("text,redacted", [
    ("postgresql://svc:s3cret@db:5432/app", "postgresql://svc:***@db:5432/app"),
    ("postgres://svc:s3:cr@et@db/app", "postgres://svc:***@db/app"),
    ("postgresql://svc@db/app?password=s3cret&sslmode=require", "postgresql://svc@db/app?password=***&sslmode=require"),
    ("host=db user=svc password=s3cret dbname=app", "host=db user=svc password=*** dbname=app"),
    (r"host=db password = 'it\'s \\ secret' dbname=app", "host=db password = *** dbname=app"),
    ("postgresql://svc@db/app", "postgresql://svc@db/app"),
])
def test_a_connection_string_is_redacted_without_knowing_the_password(text, redacted):
    assert redact_dsn(text) == redacted


def test_without_psycopg_the_profiles_say_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "psycopg", None)  # what `import psycopg` finds when it is not installed
    with pytest.raises(ValueError, match=r"dsn: the `psycopg` package is not installed \(pip install 'psycopg\[binary\]'\)"):
        WorkspaceProfiles("postgresql://svc@127.0.0.1/postgres")
