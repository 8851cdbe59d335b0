"""read_bulk_factor: the published state document from a file, Redis and SSM, and every
failed read falling back to full capacity through the component (docs/behaviour.md §7 and §9)."""

import json
import os
import shutil
import socket
import subprocess
import time

import pytest

from capacity_admission import AdmissionRequest, read_bulk_factor, resolve_budget
from capacity_admission.state import parse_document

DOCUMENT = {
    "state": "constrained",
    "factors": {"bulk": 0.5, "heavy": 0.7, "write": 1.0, "read": 1.0},
    "decided_at": "2026-10-20T14:30:00Z",
    "policy": {"name": "capacity-policy", "version": "1.0.0", "digest": "ab" * 32},
    "pinned": False,
    "cause": "escalate",
    "sequence": 42,
}


def admit_with(reading):
    return resolve_budget(AdmissionRequest(factor=reading.factor, cluster_batches=10, service_batches=6, share=3))


def test_a_file_gives_the_bulk_factor_and_the_document_identity(tmp_path):
    path = tmp_path / "state.json"
    path.write_text(json.dumps(DOCUMENT))
    for source in (str(path), f"file:{path}"):
        reading = read_bulk_factor(source)
        assert (reading.factor, reading.error, reading.failed) == (0.5, None, False)
        assert (reading.state, reading.sequence, reading.decided_at) == ("constrained", 42, "2026-10-20T14:30:00Z")
    result = admit_with(reading)
    assert (result.factor_used, result.factor_read_failed, result.service_budget) == (0.5, False, 3)


@pytest.mark.parametrize("content,why", [
    (None, "No such file"),
    ("{not json", "not a JSON state document"),
    ("[1, 2]", "not a JSON object"),
    (json.dumps({**DOCUMENT, "factors": {"heavy": 0.5}}), "no numeric factors.bulk"),
    (json.dumps({**DOCUMENT, "factors": {"bulk": "0.5"}}), "no numeric factors.bulk"),
    (json.dumps({**DOCUMENT, "factors": {"bulk": True}}), "no numeric factors.bulk"),
    (json.dumps({**DOCUMENT, "factors": None}), "no numeric factors.bulk"),
])
def test_an_unreadable_document_is_a_failed_read_and_full_capacity(tmp_path, content, why):
    path = tmp_path / "state.json"
    if content is not None:
        path.write_text(content)
    reading = read_bulk_factor(str(path))
    assert reading.factor is None and why in reading.error
    result = admit_with(reading)
    assert result.factor_read_failed and result.factor_used == 1.0 and result.admit == 3


def test_an_out_of_range_factor_is_passed_on_and_the_component_rejects_it():
    reading = parse_document(json.dumps({**DOCUMENT, "factors": {"bulk": 1.5}}))
    assert reading.factor == 1.5 and reading.error is None
    assert admit_with(reading).factor_read_failed


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory):
    pytest.importorskip("redis")
    server = shutil.which("redis-server")
    if server is None:
        pytest.skip("redis-server is not installed")
    port = free_port()
    folder = tmp_path_factory.mktemp("redis")
    proc = subprocess.Popen([server, "--bind", "127.0.0.1", "--port", str(port), "--save", "",
                             "--appendonly", "no", "--dir", str(folder)], stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    pytest.fail("redis-server did not start")
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_redis_gives_the_factor_under_the_sentinels_key(redis_url):
    import redis

    client = redis.Redis.from_url(redis_url)
    client.set("capacity:state", json.dumps(DOCUMENT), ex=300)
    client.set("other:key", json.dumps({**DOCUMENT, "factors": {"bulk": 0.25}}))
    client.close()
    assert read_bulk_factor(redis_url).factor == 0.5
    assert read_bulk_factor(redis_url, key="other:key").factor == 0.25


def test_an_expired_or_absent_redis_key_is_a_failed_read(redis_url):
    reading = read_bulk_factor(redis_url, key="capacity:absent")
    assert reading.factor is None and "no key capacity:absent" in reading.error
    assert admit_with(reading).factor_read_failed


def test_an_unreachable_redis_is_a_failed_read_within_the_timeout():
    pytest.importorskip("redis")
    started = time.monotonic()
    reading = read_bulk_factor(f"redis://127.0.0.1:{free_port()}/0", timeout=0.5)
    assert reading.factor is None and "ConnectionError" in reading.error
    assert time.monotonic() - started < 5


@pytest.fixture
def ssm(monkeypatch):
    moto = pytest.importorskip("moto")
    pytest.importorskip("boto3")
    for name in ("AWS_ENDPOINT_URL_SSM", "AWS_ENDPOINT_URL", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    with moto.mock_aws():
        import boto3

        yield boto3.client("ssm")


def test_an_ssm_parameter_gives_the_factor(ssm):
    ssm.put_parameter(Name="/capacity/state", Value=json.dumps(DOCUMENT), Type="String", Overwrite=True)
    reading = read_bulk_factor("ssm:/capacity/state")
    assert (reading.factor, reading.sequence) == (0.5, 42)


def test_a_missing_ssm_parameter_is_a_failed_read(ssm):
    reading = read_bulk_factor("ssm:/capacity/none")
    assert reading.factor is None and "not found" in reading.error
    assert read_bulk_factor("ssm:").error.startswith("ssm: needs a parameter name")


def test_a_missing_client_library_is_a_failed_read(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def without(name, *args, **kwargs):
        if name in ("redis", "boto3"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", without)
    assert "`redis` package is not installed" in read_bulk_factor("redis://127.0.0.1:1/0").error
    assert "`boto3` is not installed" in read_bulk_factor("ssm:/capacity/state").error
