"""The gateway under load: 4 panes x 1,000 concurrent calls (allowed, denied, gated and asked calls left
to time out), the upstream killed and restarted in the middle (the scenario is ``support/load.py``).

No 5xx and no crash; no denied call reaches the upstream (counted by the upstream itself); the audit has
one row per call made; latencies are reported (figures: ``benchmarks/gateway_load.py``), never asserted.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter

import pytest
from support.load import Call, LoadResult, run_load
from support.report import report

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]

PANES, CALLS = 4, 1000


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> LoadResult:
    ran = asyncio.run(run_load(tmp_path_factory.mktemp("load"), panes=PANES, calls=CALLS))
    report(f"gateway load ({PANES} panes x {CALLS} calls, upstream killed mid-way): {json.dumps(ran.figures())}")
    return ran


def said(result: LoadResult) -> set[str]:
    return {pane.name for pane in result.panes if pane.said_keyword}


def load_calls(result: LoadResult) -> list[Call]:
    return result.load_calls


def test_every_call_is_answered_without_a_5xx_and_the_gateway_lives(result: LoadResult) -> None:
    assert len(load_calls(result)) == PANES * CALLS
    assert not [status for status in result.statuses if status >= 500 or status == 0], result.statuses
    assert result.gateway_exit is None, "the gateway process ended during the load"
    unclear = [call for call in result.calls if call.outcome == "other"]
    assert not unclear, unclear[:5]


def test_no_denied_call_reaches_the_upstream(result: LoadResult) -> None:
    ran = Counter((tool, pane) for tool, pane, _ in result.upstream_log)
    assert not [key for key in ran if key[0] in ("write", "publish")], ran
    assert not [key for key in ran if key[0] == "launch" and key[1] not in said(result)], ran
    names = {pane.index: pane.name for pane in result.panes}
    for call in load_calls(result):
        refused = call.tool in ("write", "publish") or (call.tool == "launch" and names[call.pane] not in said(result))
        assert (call.outcome == "refused") == refused, call
    # What the gateway said it let through, the upstream ran (plus calls cut off by the kill, answered "broken").
    for (tool, pane), count in ran.items():
        index = next(p.index for p in result.panes if p.name == pane)
        answered = Counter(c.outcome for c in result.calls if (c.tool, c.pane) == (tool, index))  # with the reference
        assert answered["ok"] <= count <= answered["ok"] + answered["broken"], (tool, pane, count, answered)


def test_the_upstream_was_killed_in_the_middle_and_came_back(result: LoadResult) -> None:
    before, after = result.pids
    assert before != after and result.restarts >= 1
    served_by = Counter(pid for _, _, pid in result.upstream_log)
    assert served_by[before] > 0 and served_by[after] > 0, served_by
    answered_after_restart = [c for c in load_calls(result) if c.outcome == "ok" and c.started > result.restarted_at]
    assert answered_after_restart, "no allowed call was answered by the restarted upstream"
    assert result.asks_seen == sum(call.tool == "publish" for call in load_calls(result))
    assert all("nobody answered" in call.text for call in load_calls(result) if call.tool == "publish")


def test_the_audit_has_one_row_per_call_and_agrees(result: LoadResult) -> None:
    assert len(result.audit) == len(result.calls)
    ids = {pane.id: pane.index for pane in result.panes}
    assert Counter((ids[row.pane], row.name) for row in result.audit if row.pane) == Counter(
        (call.pane, call.tool) for call in result.calls
    )
    denied_rows = Counter((ids[row.pane], row.name) for row in result.audit if row.pane and row.decision == "deny")
    refused_calls = Counter((call.pane, call.tool) for call in result.calls if call.outcome == "refused")
    assert denied_rows == refused_calls
