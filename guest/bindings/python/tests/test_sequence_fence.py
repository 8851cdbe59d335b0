"""A reader never goes back to an older decision (docs/behaviour.md §9.1, "Never back"), against
real Redis and moto's SSM: a document with a lower sequence than the newest one acted on is
refused while that one is fresh, and accepted once it is stale (a store that was reset). And no
channel value larger than a state document can be is loaded whole."""

from __future__ import annotations

from capacity_admission import BulkFactorReader
from capacity_admission.channels import MAX_DOCUMENT
from published import NOW, PARAMETER, document, publish


def reader(redis_server, clock, **options) -> BulkFactorReader:
    return BulkFactorReader(cache=redis_server.url, parameter=f"ssm:{PARAMETER}", refresh=0, parameter_refresh=0, timeout=1.0, clock=clock, **options)


def test_a_late_write_of_an_older_sequence_is_refused_while_the_newer_is_fresh(redis, ssm):
    now = [NOW]
    publish(redis, ssm, cache=document(0.0, state="critical", sequence=43), parameter=document(0.0, state="critical", sequence=43))
    with reader(redis, lambda: now[0]) as r:
        assert (r.read().factor, r.read().sequence) == (0.0, 43)
        # A stale leader's write lands in both channels (SSM has no compare-and-set).
        publish(redis, ssm, cache=document(1.0, state="normal", sequence=42), parameter=document(1.0, state="normal", sequence=42))
        now[0] += 30
        got = r.read()
        assert (got.factor, got.state, got.sequence, got.source, got.age_s) == (0.0, "critical", 43, "remembered", 90)
        assert (got.cache, got.parameter) == ("superseded", "superseded")
        assert "superseded: sequence 42 is older than sequence 43 already read" in got.error
        assert r.counters().reads[("cache", "superseded")] == 1
        # The same sequence again, or a newer one, is read as usual.
        publish(redis, ssm, cache=document(0.5, sequence=44))
        assert (r.read().factor, r.read().cache) == (0.5, "usable")


def test_a_sequence_that_is_not_a_whole_number_cannot_be_ordered_and_is_refused(redis, ssm):
    """`"sequence": 1.0` (or a string, or a boolean) cannot be ordered after the decision in force;
    it let a stale "normal, bulk 1.0" past the fence (security review, 13)."""
    now = [NOW]
    publish(redis, ssm, cache=document(0.0, state="critical", sequence=43), parameter=document(0.0, state="critical", sequence=43))
    with reader(redis, lambda: now[0]) as r:
        assert r.read().factor == 0.0
        for unordered in (1.0, 44.0, "44", True, None):
            publish(redis, ssm, cache=document(1.0, state="normal", sequence=unordered),
                    parameter=document(1.0, state="normal", sequence=unordered))
            got = r.read()
            assert (got.factor, got.state, got.sequence) == (0.0, "critical", 43), unordered
            assert (got.cache, got.parameter) == ("superseded", "superseded"), unordered
            assert "sequence is not a whole number" in got.error, got.error


def test_the_parameter_is_used_when_only_the_cache_went_back(redis, ssm):
    publish(redis, ssm, cache=document(0.0, sequence=43))
    with reader(redis, lambda: NOW) as r:
        assert r.read().sequence == 43
        publish(redis, ssm, cache=document(1.0, sequence=42), parameter=document(0.25, sequence=44))
        got = r.read()
        assert (got.factor, got.source, got.sequence, got.cache, got.parameter) == (0.25, "parameter", 44, "superseded", "usable")


def test_once_the_newest_is_stale_a_lower_sequence_is_accepted(redis, ssm):
    """A reset store starts again at sequence 1: the fence holds only while the newest is fresh."""
    now = [NOW]
    publish(redis, ssm, cache=document(0.0, sequence=43))
    with reader(redis, lambda: now[0]) as r:
        assert r.read().sequence == 43
        now[0] += 121  # the document was 60 s old: now 181 s, past the 180 s maximum age
        publish(redis, ssm, cache=document(0.75, age=-100, sequence=1))
        got = r.read()
        assert (got.factor, got.sequence, got.cache) == (0.75, 1, "usable")


def test_a_value_larger_than_a_document_is_a_failed_read_not_loaded(redis, ssm, tmp_path):
    publish(redis, ssm, cache="x" * (50 * 1024 * 1024), parameter=document(0.25))
    with reader(redis, lambda: NOW) as r:
        got = r.read()
    assert (got.factor, got.source, got.cache) == (0.25, "parameter", "read-failed")
    assert f"larger than {MAX_DOCUMENT // 1024} KiB" in got.error
    big = tmp_path / "cache.json"
    big.write_bytes(b" " * (MAX_DOCUMENT + 1))
    with BulkFactorReader(cache=str(big), clock=lambda: NOW) as r:
        assert "larger than 64 KiB" in r.read().error
    big.write_text(document(0.5) + " " * (MAX_DOCUMENT - len(document(0.5))))
    with BulkFactorReader(cache=str(big), clock=lambda: NOW) as r:
        assert r.read().factor == 0.5, "exactly the limit is read"
