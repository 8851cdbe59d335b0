"""One masking rule for every connection string this package shows (the second security review,
finding 5): `redaction.redact` for each secret-bearing form, and each output path that shows a
URL or DSN (a channel's label in the reader's logs, a refused DSN's error) fed a secret in every
form. Before, a Redis URL's `?password=` reached the logs and a malformed PostgreSQL password
reached the error."""

import logging

import pytest

from capacity_admission import BulkFactorReader
from capacity_admission.profiles import WorkspaceProfiles
from capacity_admission.redaction import redact

NOW = 1_796_000_000


@pytest.mark.parametrize("text,shown", [
    ("postgresql://svc:s3cret@db:5432/app", "postgresql://svc:***@db:5432/app"),
    ("redis://:p@ss@cache/0", "redis://:***@cache/0"),
    ("redis://cache:6379/0?password=S1", "redis://cache:6379/0?password=***"),
    ("unix:///tmp/r.sock?db=0&password=S1", "unix:///tmp/r.sock?db=0&password=***"),
    ("postgresql://svc@db/app?password=S1&sslmode=require", "postgresql://svc@db/app?password=***&sslmode=require"),
    (r"host=db password=ap\ SECRETTAIL dbname=x", "host=db password=*** dbname=x"),
    (r"host=db password = 'it\'s \\ secret' dbname=app", "host=db password = *** dbname=app"),
    ("http://p/api?apikey=S1&key=S2&auth=S3&sig=S4&x=1", "http://p/api?apikey=***&key=***&auth=***&sig=***&x=1"),
    ("http://p/api#S1", "http://p/api#***"),
    ("signal=cpu author=alice keys=2 redis://cache/0", "signal=cpu author=alice keys=2 redis://cache/0"),
])
def test_every_secret_form_is_masked_and_nothing_else(text, shown):
    assert redact(text) == shown
    assert redact(shown) == shown, "masking twice changes nothing"


@pytest.mark.parametrize("cache", [
    "redis://127.0.0.1:1/0?password=SECRETPW",
    "redis://user:SECRETPW@127.0.0.1:1/0",
    "unix:///nonexistent/redis.sock?db=0&password=SECRETPW",
    "redis://127.0.0.1:1/0#SECRETPW",
])
def test_a_failing_channel_is_logged_without_its_secret(cache, caplog):
    caplog.set_level(logging.DEBUG, logger="capacity_admission")
    with BulkFactorReader(cache=cache, refresh=0, timeout=0.5, clock=lambda: NOW) as r:
        assert r.read().failed
        assert "SECRETPW" not in repr(r)
    said = "\n".join(rec.getMessage() for rec in caplog.records)
    assert said, "the failure was logged"
    assert "SECRETPW" not in said, said


@pytest.mark.parametrize("dsn", [
    "postgresql://app:apppw%SECRETPW@127.0.0.1:1/postgres",
    "host=127.0.0.1 port=notaport password=SECRETPW",
    "postgresql://app@127.0.0.1:1/postgres?password=SECRETPW&sslmode=bogus",
])
def test_a_refused_dsn_never_shows_its_password(psycopg_installed, dsn):
    try:
        profiles = WorkspaceProfiles(dsn)
    except ValueError as e:
        assert "SECRETPW" not in str(e), e
        return
    assert "SECRETPW" not in profiles.label
