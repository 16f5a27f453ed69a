"""The kernel sandbox every pane runs in, compiled from its role (docs/sandbox.md).

- :mod:`polter.sandbox.rules`: a role's write rules as folders the kernel can hold (pure; ``polter roles
  check`` reports the rules it cannot);
- :mod:`polter.sandbox.bwrap`: a pane's program inside bubblewrap: files, processes, network, privileges;
- :mod:`polter.sandbox.confine`: what the session host knows of a pane turned into its sandbox;
- :mod:`polter.sandbox.egress` (``polter egress``) and :mod:`polter.sandbox.egress_supervisor`: the egress proxy,
  the only way out of a pane's network, deciding each connection by the role's ``web`` rules.
"""
