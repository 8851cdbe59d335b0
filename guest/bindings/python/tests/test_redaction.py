"""One masking rule for every connection string this package shows (the second security review,
finding 5): `redaction.redact` for each secret-bearing form, and each output path that shows a
URL or DSN (a channel's label in the reader's logs, a refused DSN's error) fed a secret in every
form. Before, a Redis URL's `?password=` reached the logs and a malformed PostgreSQL password
reached the error."""

import json
import logging

import pytest

from capacity_admission import BulkFactorReader
from capacity_admission.profiles import WorkspaceProfiles
from capacity_admission.redaction import redact, scrub
from conftest import VECTORS

NOW = 1_796_000_000


def _shared_cases():
    """The table the sentinel and the Node package run too (tests/vectors/redaction.json)."""
    table = json.loads((VECTORS / "redaction.json").read_text())
    return [(c["text"], c["shown"]) for c in table["cases"]]


@pytest.mark.parametrize("text,shown", _shared_cases())
def test_every_case_of_the_shared_table_is_masked_as_it_says(text, shown):
    assert redact(text) == shown
    assert redact(shown) == shown, "masking twice changes nothing"


def test_a_password_with_a_space_or_an_encoded_name_is_scrubbed_from_a_library_s_words():
    assert scrub('unexpected spaces found in "pa ssSECRET@cache"', "redis://u:pa ssSECRET@cache:6379/0") == \
        'unexpected spaces found in "***@cache"'
    assert scrub("auth failed for p@ss-word and p%40ss-word", "redis://:p%40ss-word@cache:6379/0") == "auth failed for *** and ***"


@pytest.mark.parametrize("cache", [
    "redis://127.0.0.1:1/0?password=SECRETPW",
    "redis://u:pa ssSECRETPW@127.0.0.1:1/0",
    "redis://127.0.0.1:1/0?access-key=SECRETPW",
    "redis://127.0.0.1:1/0?p%61ssword=SECRETPW",
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
    "postgresql://app:PG PY3SECRETPW@127.0.0.1:1/postgres",
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
