"""The compiled core: the screen engine's hot modules built by mypyc, used where they are current.

`build_native.py` (run by ``make``) compiles :data:`COMPILED` from the same sources into ``_compiled/``
beside this file, with a manifest of the sources' hashes. The package puts that folder first on its
``__path__`` (see :func:`search_path`), so ``import polter.terminal._flood`` loads the extension there
and every other module from source. Nothing is used that does not match the source beside it (an edited
module runs as Python until ``make`` compiles it again), nor for another Python (the extensions' file
names carry the interpreter's tag), nor when ``POLTER_PURE_PYTHON`` is set: the same tests run both ways.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Final

__all__ = ["COMPILED", "FOLDER", "MANIFEST", "PURE_PYTHON", "search_path", "source_hashes"]

COMPILED: Final = ("_flood", "_parser", "_history")
"""The modules of `polter.terminal` compiled: the flood fast path, the tokenizer and the scrollback."""
FOLDER: Final = Path(__file__).with_name("_compiled")
MANIFEST: Final = FOLDER / "sources.json"
PURE_PYTHON: Final = "POLTER_PURE_PYTHON"
"""Set (to anything but empty): every module runs from its source."""


def source_hashes() -> dict[str, str]:
    """Each compiled module's name → the SHA-256 of its source as it is now."""
    here = Path(__file__).parent
    return {name: hashlib.sha256((here / f"{name}.py").read_bytes()).hexdigest() for name in COMPILED}


def search_path() -> list[str]:
    """What `polter.terminal` puts before its own folder on ``__path__``: the compiled folder, when it is
    current for every compiled module and not turned off."""
    if os.environ.get(PURE_PYTHON):
        return []
    try:
        built = json.loads(MANIFEST.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [str(FOLDER)] if built == source_hashes() else []
