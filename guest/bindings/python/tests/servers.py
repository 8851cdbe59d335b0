"""Real servers for the reader tests, started on free 127.0.0.1 ports and stopped after:
`redis-server` and moto's `moto_server` (SSM). Where one is not installed the tests skip, unless
`CAPACITY_REQUIRE_SERVERS=1` (as `tests/cross_language.sh` sets it), where they fail."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import List, Optional

import pytest


def require(program: str) -> str:
    found = shutil.which(program)
    if found is None:
        message = f"{program} is not installed"
        if os.environ.get("CAPACITY_REQUIRE_SERVERS") == "1":
            pytest.fail(message + " (CAPACITY_REQUIRE_SERVERS=1)")
        pytest.skip(message)
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

    def gets(self) -> int:
        """GET commands the server has answered (INFO commandstats)."""
        with self.client() as c:
            return int(c.info("commandstats").get("cmdstat_get", {}).get("calls", 0))


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
