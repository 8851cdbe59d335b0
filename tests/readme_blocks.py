#!/usr/bin/env python3
"""Runs the READMEs' blocks as written, so that a command or an example in the docs that stops
working fails CI: README.md and the Python and Node packages' READMEs.

Every ```sh block runs with bash -euo pipefail, in the repository's root (where the README's
relative paths point), with a fresh HOME, a fresh `sentinel-state/` (an existing one is moved
aside and put back), `cargo install` into a fresh root put first on PATH, and the build in the
repository's own target folder (so an install after the release build compiles nothing).
Whatever the blocks leave in the root is removed afterwards.

Every ```python block runs with the package installed by tests/cross_language.sh
(target/cross-language/venv, or $CAPACITY_PYTHON), every ```js block as an ES module that
imports the built package (guest/bindings/js) by its name. Both meet the servers a service
would name and this machine does not have: the example's hosts do not resolve, the AWS
endpoint and PROFILES_DSN refuse connections. So an example runs its real code path for a
sentinel and a database that cannot be read (each package's promise: no exception, the
fallback factor and share) and fails on any change of name, argument or field. What an
example leaves to the service is given before it: Python's `start_batches(n)`, JavaScript's
`startBatches(n)` and `queue` (one queued batch).

A block is steered by the HTML comment on the line before its fence:

    <!-- readme-test: skip: REASON -->      not run; REASON is printed (every skip says why)
    <!-- readme-test: deploy -->            run in a fresh deploy folder holding an empty
                                            `policies/`, `target` (the repository's) and the
                                            block saved by the comment below as sentinel.toml
    <!-- readme-test: save sentinel.toml --> on a ```toml block: the deploy folder's config
    <!-- readme-test: commonjs -->          on a ```js block: run as `index.js` of a CommonJS
                                            project (the package.json `npm init -y` writes)

Usage: tests/readme_blocks.py [README.md...]   (exit 1 naming the file, the block's line and
its output)
"""

import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger("readme-blocks")
DIRECTIVE = re.compile(r"^<!--\s*readme-test:\s*(.*?)\s*-->$")
TIMEOUT_S = 20 * 60
EXAMPLE_TIMEOUT_S = 120
STATE_DIR = "sentinel-state"
READMES = ["README.md", "guest/bindings/python/README.md", "guest/bindings/js/README.md"]
GIVEN = {
    "python": "def start_batches(n):\n    print(f'starting {n} batches')\n\n",
    "js": "function startBatches(n) { console.log(`starting ${n} batches`); }\n"
          "const queue = [{ id: 'job-17', workspace: 'acme', enqueuedAt: 1796432870 }];\n",
}


@dataclass
class Block:
    file: str  # relative to the repository's root
    line: int  # the fence's line, 1-based
    language: str
    text: str
    directive: str  # "" when none


def blocks(readme: Path, name: str) -> list:
    lines = readme.read_text(encoding="utf-8").split("\n")
    out, i = [], 0
    while i < len(lines):
        fence = re.match(r"^```(\w*)\s*$", lines[i])
        if not fence:
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")), None)
        if end is None:
            raise SystemExit(f"{readme}:{i + 1}: a code block is never closed")
        before = lines[i - 1].strip() if i > 0 else ""
        directive = DIRECTIVE.match(before)
        out.append(Block(name, i + 1, fence.group(1), "\n".join(lines[i + 1:end]) + "\n", directive.group(1) if directive else ""))
        i = end + 1
    return out


def environment(scratch: Path, root: Path) -> dict:
    env = dict(os.environ)
    home = Path.home()
    # A fresh HOME, with cargo's and rustup's homes where they were (the registry and toolchain).
    env.setdefault("CARGO_HOME", str(home / ".cargo"))
    env.setdefault("RUSTUP_HOME", str(home / ".rustup"))
    env["HOME"] = str(scratch / "home")
    env.setdefault("CARGO_TARGET_DIR", str(root / "target"))
    env["CARGO_INSTALL_ROOT"] = str(scratch / "install")
    env["PATH"] = f"{scratch / 'install' / 'bin'}{os.pathsep}{env['PATH']}"
    env.setdefault("RUST_LOG", "warn")
    # The examples' servers: hosts that do not resolve, and these, which refuse.
    env.update({"AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "readme",
                "AWS_SECRET_ACCESS_KEY": "readme", "AWS_ENDPOINT_URL": "http://127.0.0.1:9",
                "PROFILES_DSN": "postgresql://svc@127.0.0.1:9/app"})
    # A fresh HOME has no git identity: the blocks' commits get this one.
    env.update({"GIT_AUTHOR_NAME": "readme", "GIT_AUTHOR_EMAIL": "readme@example.invalid",
                "GIT_COMMITTER_NAME": "readme", "GIT_COMMITTER_EMAIL": "readme@example.invalid"})
    (scratch / "home").mkdir()
    return env


def command(block: Block, scratch: Path, root: Path) -> tuple:
    """The program that runs `block`, and its time limit."""
    if block.language in ("sh", "bash"):
        return ["bash", "-euo", "pipefail", "-c", block.text], TIMEOUT_S
    name = f"{Path(block.file).parent.name or 'root'}-{block.line}"
    if block.language == "python":
        python = os.environ.get("CAPACITY_PYTHON", str(root / "target" / "cross-language" / "venv" / "bin" / "python"))
        if not Path(python).exists():
            raise SystemExit(f"{python} does not exist: run tests/cross_language.sh first (it installs the package there)")
        script = scratch / f"{name}.py"
        script.write_text(GIVEN["python"] + block.text, encoding="utf-8")
        return [python, str(script)], EXAMPLE_TIMEOUT_S
    modules = scratch / "js" / "node_modules"
    if not modules.exists():
        modules.mkdir(parents=True)
        (modules / "capacity-admission").symlink_to(root / "guest" / "bindings" / "js")
    if block.directive == "commonjs":
        # `npm init -y`'s package.json: no "type", so every .js file is CommonJS.
        project = scratch / "js" / f"commonjs-{name}"
        project.mkdir()
        (project / "package.json").write_text('{"name": "service", "version": "1.0.0", "main": "index.js"}\n', encoding="utf-8")
        script = project / "index.js"
    else:
        script = scratch / "js" / f"{name}.mjs"
    script.write_text(GIVEN["js"] + block.text, encoding="utf-8")
    return ["node", str(script)], EXAMPLE_TIMEOUT_S


def run_block(block: Block, program: list, limit: int, cwd: Path, env: dict, logs: Path) -> None:
    where = f"{block.file} line {block.line}"
    log_file = logs / f"{block.file.replace('/', '_')}-{block.line}.log"
    log.info("%s (%s): running in %s", where, block.language, cwd)
    started = time.monotonic()
    with open(log_file, "w", encoding="utf-8") as out:
        # Its own process group: a block that overruns is stopped with everything it started.
        child = subprocess.Popen(program, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            code = child.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            code = None
        finally:
            if child.poll() is None or code is None:
                try:
                    os.killpg(child.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                child.wait()
    if code != 0:
        tail = "\n".join(log_file.read_text(encoding="utf-8", errors="replace").splitlines()[-40:])
        why = f"did not finish in {limit} s" if code is None else f"exited {code}"
        raise SystemExit(f"{where}: the block {why}:\n{block.text}\n--- its output (last 40 lines; all in {log_file}):\n"
                         f"{tail}\nMend the README or the code it shows.")
    log.info("%s: passed in %.1f s", where, time.monotonic() - started)


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    root = Path(__file__).resolve().parent.parent
    names = sys.argv[1:] or READMES
    found = [b for name in names for b in blocks(root / name, name)]
    if not any(b.language in ("sh", "bash") for b in found):
        raise SystemExit(f"{', '.join(names)}: no sh blocks found: are these the READMEs?")
    unknown = [b for b in found if b.directive and not re.match(r"^(skip: .+|deploy|save sentinel\.toml|commonjs)$", b.directive)]
    if unknown:
        raise SystemExit("\n".join(f"{b.file}:{b.line - 1}: unknown readme-test comment {b.directive!r}" for b in unknown))
    logs = Path(os.environ.get("CARGO_TARGET_DIR", root / "target")) / "readme-blocks"
    stranded = logs / f"kept-{STATE_DIR}"
    if stranded.exists():
        raise SystemExit(f"{stranded} holds the {STATE_DIR}/ an interrupted run moved aside: move it back to {root / STATE_DIR} "
                         "(or remove it), then run again")
    shutil.rmtree(logs, ignore_errors=True)
    logs.mkdir(parents=True)
    before = set(os.listdir(root))
    scratch = Path(tempfile.mkdtemp(prefix="readme-blocks-"))
    # Beside the logs, on the repository's own file system (a move, never a copy), and put back
    # first whatever happens; SIGTERM and SIGHUP end the run through the same path.
    kept = logs / f"kept-{STATE_DIR}"
    for stop in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(stop, lambda number, _frame: sys.exit(f"stopped by signal {number}"))
    if (root / STATE_DIR).exists():
        log.info("moving the existing %s aside to %s for the run; it is put back afterwards", STATE_DIR, kept)
        shutil.move(str(root / STATE_DIR), kept)
        before.discard(STATE_DIR)
    ran, skipped = 0, 0
    try:
        env = environment(scratch, root)
        config = None
        for block in found:
            if block.directive == "save sentinel.toml":
                config = block.text
            if block.language not in ("sh", "bash", "python", "js"):
                continue
            if block.directive.startswith("skip: "):
                log.info("%s line %d: skipped: %s", block.file, block.line, block.directive[len("skip: "):])
                skipped += 1
                continue
            cwd = root if block.language in ("sh", "bash") else scratch
            if block.directive == "deploy":
                if config is None:
                    raise SystemExit(f"{block.file} line {block.line}: a deploy block with no `save sentinel.toml` block before it")
                cwd = scratch / f"deploy-{block.line}"
                (cwd / "policies").mkdir(parents=True)
                (cwd / "sentinel.toml").write_text(config, encoding="utf-8")
                (cwd / "target").symlink_to(Path(env["CARGO_TARGET_DIR"]).resolve())
            program, limit = command(block, scratch, root)
            run_block(block, program, limit, cwd, env, logs)
            ran += 1
    finally:
        for name in sorted(set(os.listdir(root)) - before):
            path = root / name
            log.info("removing %s, which the blocks wrote", path)
            try:
                shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
            except OSError as e:
                log.error("could not remove %s (%s): remove it by hand", path, e)
        if kept.exists():
            shutil.move(str(kept), root / STATE_DIR)
            log.info("%s put back", STATE_DIR)
        shutil.rmtree(scratch, ignore_errors=True)
    log.info("%d blocks ran and passed, %d skipped (each with its reason above); logs in %s", ran, skipped, logs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
