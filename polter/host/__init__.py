"""The session host: the process that owns a session (``polter`` starts it detached; docs/architecture.md).

It runs each pane's program on a PTY with its screen engine (:mod:`~polter.host.pty`,
:mod:`~polter.host.hosted_terminal`), keeps the line the human types and what each agent does, owns the
workspace (the agents' registrations, roles, asks) and supervises the gateway and the egress proxy. The
:class:`~polter.host.session_host.SessionHost` is composed of parts that each own one concern and register the
window calls they serve. It imports no Textual: a test checks.
"""
