"""Where the repository's vectors and built components are (override with CAPACITY_REPO), and
the real servers the reader, profiles and BulkAdmission tests use (see servers.py)."""

import os
from pathlib import Path

import pytest

from published import PARAMETER
from servers import Moto, Postgres, Redis, missing

REPO = Path(os.environ.get("CAPACITY_REPO") or Path(__file__).resolve().parents[4])
VECTORS = REPO / "tests" / "vectors"
POLICIES = REPO / "target" / "policies"


def built(name: str) -> Path:
    path = POLICIES / name
    if not path.is_file():
        pytest.fail(f"{path} is missing: run `cargo policies` in {REPO} first")
    return path


@pytest.fixture(scope="module")
def moto():
    server = Moto()
    saved = {k: os.environ.get(k) for k in ("AWS_ENDPOINT_URL_SSM", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                                            "AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_ENDPOINT_URL")}
    os.environ.update({"AWS_ENDPOINT_URL_SSM": server.url, "AWS_ACCESS_KEY_ID": "testing",
                       "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "eu-west-1"})
    os.environ.pop("AWS_PROFILE", None)
    os.environ.pop("AWS_ENDPOINT_URL", None)
    try:
        yield server
    finally:
        server.stop()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@pytest.fixture
def ssm(moto):
    import boto3

    client = boto3.client("ssm")
    try:
        client.delete_parameter(Name=PARAMETER)
    except client.exceptions.ParameterNotFound:
        pass
    yield client
    client.close()


@pytest.fixture
def redis(tmp_path):
    server = Redis(tmp_path)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def postgres():
    """One PostgreSQL cluster per test module, with the read-only role `svc`."""
    server = Postgres()
    try:
        yield server
    finally:
        server.destroy()


@pytest.fixture
def psycopg_installed():
    """WorkspaceProfiles needs psycopg even to be built."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        missing("psycopg is not installed (pip install 'psycopg[binary]')")
