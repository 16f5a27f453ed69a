"""The MCP SDK's packages, imported without the parts the gateway does not use.

mcp 2.3's package ``__init__`` files import everything: any ``import mcp.server.lowlevel`` first runs
``mcp/__init__.py``, which imports the client, and through it ``mcp/server/__init__.py``: the high-level
``MCPServer``, OAuth, and the request-state cryptography, whose Rust bindings alone take 7.5 MB. The gateway
uses the low-level server and, per upstream, the client session and a transport, each from the module
that defines it. ``mcp_types``' ``__init__`` loads the wire models of both protocol eras (8 MB, 0.15 s), which
the gateway needs only once MCP is spoken (a pane's first request, an upstream's start, a call).
:func:`import_sdk_lazily` registers ``mcp``, ``mcp.server``, ``mcp.client`` and ``mcp_types`` as
packages whose own ``__init__`` runs only at the first use of a name it defines (``from mcp import
Client``, ``mcp.MCPServer``): a submodule import loads that submodule alone, and every name the SDK
exports stays reachable, so nothing fails for lack of it (PEP 562's module ``__getattr__``).

It relies on nothing private: only on the packages' layout, which the gateway's imports name anyway.
``tests/gateway/test_sdk.py`` checks with the installed SDK that the gateway's modules load without the
parts above and that the packages' own names still resolve, naming the SDK's version when not.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
from collections.abc import Callable
from types import ModuleType

__all__ = ["LAZY_PACKAGES", "import_sdk_lazily"]

LAZY_PACKAGES = ("mcp", "mcp.server", "mcp.client", "mcp_types")
"""The SDK packages whose ``__init__`` imports what the gateway does not use (yet)."""


def import_sdk_lazily() -> bool:
    """Register :data:`LAZY_PACKAGES` as lazily initialised packages. ``False``, and nothing done, when the
    SDK is imported already (a process that runs a gateway next to the SDK's client) or is not laid out
    as packages on ``sys.path`` (then it is imported as usual: it works, it takes more memory; the tests
    check that this SDK is laid out as expected)."""
    if any(name in sys.modules for name in LAZY_PACKAGES):
        return False
    packages: dict[str, ModuleType] = {}
    for name in LAZY_PACKAGES:
        parent = name.rpartition(".")[0]
        spec = importlib.machinery.PathFinder.find_spec(name, packages[parent].__path__ if parent else None)
        if spec is None or spec.loader is None or spec.submodule_search_locations is None:
            return False
        packages[name] = importlib.util.module_from_spec(spec)
    for package in packages.values():
        package.__dict__["__getattr__"] = _initialise_on_use(package)
        sys.modules[package.__name__] = package
        parent, _, child = package.__name__.rpartition(".")
        if parent:
            setattr(sys.modules[parent], child, package)
    return True


def _initialise_on_use(package: ModuleType) -> Callable[[str], object]:
    """A package's ``__getattr__``: a submodule of that name is imported alone; any other name runs the
    package's own ``__init__`` (once) and is looked up there."""

    def __getattr__(attribute: str) -> object:
        if attribute.startswith("__"):
            raise AttributeError(f"module {package.__name__!r} has no attribute {attribute!r}")
        submodule = f"{package.__name__}.{attribute}"
        if importlib.machinery.PathFinder.find_spec(submodule, package.__path__) is not None:
            return importlib.import_module(submodule)
        del package.__dict__["__getattr__"]  # from here on, the package is what its __init__ makes it
        assert package.__spec__ is not None and package.__spec__.loader is not None
        package.__spec__.loader.exec_module(package)
        try:
            return package.__dict__[attribute]
        except KeyError:
            raise AttributeError(f"module {package.__name__!r} has no attribute {attribute!r}") from None

    return __getattr__
