"""Real servers for the tests, started on free 127.0.0.1 ports and stopped after: `redis-server`,
moto's `moto_server` (SSM) and a private PostgreSQL cluster. Where one is not installed the tests
skip, unless `CAPACITY_REQUIRE_SERVERS=1` (as `tests/cross_language.sh` sets it), where they fail."""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, List, Optional

import pytest


def missing(message: str) -> None:
    if os.environ.get("CAPACITY_REQUIRE_SERVERS") == "1":
        pytest.fail(message + " (CAPACITY_REQUIRE_SERVERS=1)")
    pytest.skip(message)


def require(program: str) -> str:
    found = shutil.which(program)
    if found is None:
        missing(f"{program} is not installed")
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, what: str, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"{what} did not start on 127.0.0.1:{port}")
            time.sleep(0.05)


class Redis:
    """One redis-server that can be stopped and started again on the same port."""

    def __init__(self, folder: Path) -> None:
        self.program = require("redis-server")
        self.folder = folder
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: Optional[subprocess.Popen] = None
        self.start()

    def start(self) -> None:
        args: List[str] = [self.program, "--bind", "127.0.0.1", "--port", str(self.port), "--save", "",
                           "--appendonly", "no", "--dir", str(self.folder)]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL)
        wait_for_port(self.port, self.proc, "redis-server")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)
        self.proc = None

    def client(self):
        import redis

        return redis.Redis.from_url(self.url)

    def reads(self) -> int:
        """Value reads (GETRANGE, as the reader reads, and GET) the server has answered (INFO
        commandstats)."""
        with self.client() as c:
            stats = c.info("commandstats")
        return sum(int(stats.get(f"cmdstat_{command}", {}).get("calls", 0)) for command in ("get", "getrange"))


class Moto:
    """moto's server, answering SSM on its port."""

    def __init__(self) -> None:
        program = require("moto_server")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen([program, "-H", "127.0.0.1", "-p", str(self.port)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for_port(self.port, self.proc, "moto_server")

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=10)


def postgres_bin() -> Path:
    """The newest PostgreSQL's programs (Debian keeps them in /usr/lib/postgresql/N/bin), else
    the PATH's."""
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                      key=lambda p: [int(x) if x.isdigit() else 0 for x in Path(p).parts[-3].split(".")])
    if versions:
        return Path(versions[-1]).parent
    found = shutil.which("initdb")
    if found is None:
        missing("PostgreSQL is not installed (apt-get install postgresql)")
    return Path(found).parent


class Postgres:
    """A private PostgreSQL cluster: `initdb` into a temp dir, `pg_ctl start` on a free
    127.0.0.1 port with fsync off; stopped and started again on the same port by the tests.

    `initdb` refuses root, so as root the cluster's programs run as the `postgres` user (or
    `nobody`) through `setpriv`, as tests/src/servers/postgres.rs does. Sessions over the unix
    socket are trusted (the tests' superuser `postgres`); over TCP they need a password: the
    role `svc`, which may only read the tables, logs in with `SVC_PASSWORD` (`dsn`)."""

    SVC_PASSWORD = "pw-Sv3cret-7"

    def __init__(self) -> None:
        try:
            import psycopg  # noqa: F401
        except ImportError:
            missing("psycopg is not installed (pip install 'psycopg[binary]')")
        self.bin = postgres_bin()
        self.dir = Path(tempfile.mkdtemp(prefix="capacity-pg-"))
        self.data = self.dir / "data"
        self.port = free_port()
        self._as: List[str] = []
        if os.geteuid() == 0:
            user, group = ("postgres", "postgres") if _user_exists("postgres") else ("nobody", "nogroup")
            shutil.chown(self.dir, user, group)
            self._as = ["setpriv", f"--reuid={user}", f"--regid={group}", "--clear-groups", "--"]
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth-local=trust",
                  "--auth-host=scram-sha-256", "--no-sync", "-E", "UTF8", "--locale=C")
        self.start()
        self.sql("CREATE ROLE svc LOGIN PASSWORD %s" % _literal(self.SVC_PASSWORD))
        self.sql("ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT ON TABLES TO svc")

    def dsn(self, password: Optional[str] = None, user: str = "svc") -> str:
        """A URL for `user` over TCP (with `svc`'s password unless told otherwise)."""
        secret = self.SVC_PASSWORD if password is None else password
        return f"postgresql://{user}:{secret}@127.0.0.1:{self.port}/postgres"

    def start(self) -> None:
        options = f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.dir / "server.log"), "-o", options, "-w", "-t",
                  "30", "start")

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "-t", "30", "stop")

    def running(self) -> bool:
        return (self.data / "postmaster.pid").exists()

    def destroy(self) -> None:
        if self.running():
            try:
                self.stop("immediate")
            except Exception:  # pragma: no cover - teardown goes on
                pass
        shutil.rmtree(self.dir, ignore_errors=True)

    def sql(self, statement: str, *params: Any) -> List[Any]:
        """Runs one statement as the superuser over the unix socket; its rows, if any."""
        import psycopg

        with psycopg.connect(host=str(self.dir), port=self.port, user="postgres", dbname="postgres",
                             autocommit=True) as conn:
            cursor = conn.execute(statement, params or None)
            return cursor.fetchall() if cursor.description else []

    def _run(self, program: str, *args: str) -> None:
        log = self.dir / f"{program}.out"
        with open(log, "wb") as out:  # a file, not a pipe: pg_ctl's server keeps its descriptors
            done = subprocess.run([*self._as, str(self.bin / program), *args], stdin=subprocess.DEVNULL,
                                  stdout=out, stderr=subprocess.STDOUT, timeout=60)
        if done.returncode != 0:
            server_log = self.dir / "server.log"
            tail = server_log.read_text(errors="replace")[-2000:] if server_log.exists() else ""
            pytest.fail(f"{program} {' '.join(args)} failed: {log.read_text(errors='replace')}\n{tail}")


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
