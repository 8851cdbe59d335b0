"""Build hook: puts the admission component into the package.

`pip install guest/bindings/python` (from the repository) copies
`target/policies/capacity-admission-3.2.0.wasm` and its manifest (built by `cargo policies`)
into the wheel, after checking the file's sha256 against the manifest. Set
`CAPACITY_ADMISSION_WASM=/path/to/capacity-admission-3.2.0.wasm` to take the file from
elsewhere (its `.manifest.json` must sit beside it). Everything else is in pyproject.toml.
"""

import hashlib
import json
import os
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

COMPONENT = "capacity-admission-3.2.0.wasm"
HERE = Path(__file__).resolve().parent


def component_source() -> Path:
    given = os.environ.get("CAPACITY_ADMISSION_WASM")
    path = Path(given) if given else HERE.parents[2] / "target" / "policies" / COMPONENT
    if not path.is_file():
        raise SystemExit(f"capacity-admission: {path} not found: run `cargo policies` in the repository first "
                         "(or set CAPACITY_ADMISSION_WASM)")
    return path


def manifest_of(wasm: Path) -> Path:
    return wasm.with_name(wasm.name[: -len(".wasm")] + ".manifest.json")


class build_py_with_component(build_py):
    def run(self):
        super().run()
        wasm = component_source()
        manifest = manifest_of(wasm)
        expected = json.loads(manifest.read_text())["sha256"]
        actual = hashlib.sha256(wasm.read_bytes()).hexdigest()
        if actual != expected:
            raise SystemExit(f"capacity-admission: {wasm} has sha256 {actual}, its manifest says {expected}")
        dest = Path(self.build_lib) / "capacity_admission"
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(wasm, dest / COMPONENT)
        shutil.copyfile(manifest, dest / manifest.name)
        print(f"capacity-admission: packaged {wasm} (sha256 {actual})")


setup(cmdclass={"build_py": build_py_with_component})
