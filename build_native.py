"""Compile the screen engine's hot modules with mypyc into ``polter/terminal/_compiled/`` (``make`` runs it).

The modules are `polter.terminal._native.COMPILED`, compiled from the sources in place (one extension
each, so none needs a library outside the package) in a scratch folder, then copied with a manifest of
the sources' hashes: `polter.terminal` uses them only while they match. Needs mypyc (a dev dependency)
and a C compiler; without them Polter runs the same modules as Python.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from polter.terminal._native import COMPILED, FOLDER, MANIFEST, source_hashes  # noqa: E402


def build() -> None:
    from mypyc.build import mypycify
    from setuptools import setup

    hashes = source_hashes()
    sources = [str(ROOT / "polter" / "terminal" / f"{name}.py") for name in COMPILED]
    with tempfile.TemporaryDirectory(prefix="polter-native-") as scratch:
        work = Path(scratch)
        os.chdir(work)  # setuptools reads the project's pyproject.toml from the working directory: not ours
        extensions = mypycify(sources, separate=True, target_dir=str(work / "c"), opt_level="3")
        setup(
            name="polter-native",
            ext_modules=extensions,
            script_args=["--quiet", "build_ext", "--parallel", str(os.cpu_count() or 1),  # a C compiler per module
                         "--build-lib", str(work / "lib"), "--build-temp", str(work / "tmp")],
        )
        built = sorted((work / "lib" / "polter" / "terminal").glob("*.so"))
        if not built:
            raise SystemExit(f"mypyc built nothing in {work / 'lib'}")
        shutil.rmtree(FOLDER, ignore_errors=True)
        FOLDER.mkdir()
        for path in built:
            shutil.copy2(path, FOLDER / path.name)
    MANIFEST.write_text(json.dumps(hashes, indent=1) + "\n", encoding="utf-8")
    print(f"compiled {', '.join(COMPILED)} into {FOLDER.relative_to(ROOT)}")


if __name__ == "__main__":
    build()
