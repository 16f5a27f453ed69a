"""The policy benchmark still runs (a tiny size; no timing is asserted: machines are noisy)."""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "policy.py"


def test_the_benchmark_measures_against_its_baselines() -> None:
    spec = importlib.util.spec_from_file_location("policy_benchmark", BENCHMARK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    tools = module.make_tools(random.Random(1))[:300]
    row = module.measure(50, tools)
    assert set(row) == {"rules", "dict_lookup_ns", "naive_fnmatch_us", "cold_us", "warm_us", "compile_ms"}
    assert all(value > 0 for value in row.values())
    role, _ = module.make_role(200, random.Random(2))
    assert sum(len(getattr(role.tools, d)) + len(getattr(role.servers, d)) for d in ("allow", "ask", "deny")) == 200
