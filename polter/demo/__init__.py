"""``polter --demo``: the whole story with no game server and no API key.

The launch preset is :mod:`polter.demo.launch`; the scripted agent its panes run is :mod:`polter.demo.agent`. This
package's ``__init__`` imports nothing: the agent starts in each of the demo's panes (and in the team tests' panes),
and ``python -m polter.demo.agent`` runs the package's ``__init__`` first (the launch preset's imports, pydantic
and the adapters, cost its start 0.4 s of CPU).
"""
