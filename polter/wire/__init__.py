"""What travels between a window and its session host, and how it gets there.

The messages (:mod:`~polter.wire.messages`) and calls (:mod:`~polter.wire.methods`) on the session's socket,
a screen as frames of changed rows (:mod:`~polter.wire.frames`), the window's end of the socket
(:mod:`~polter.wire.client`), where sessions live on disk (:mod:`~polter.wire.registry`), and the way to a
session on another machine (:mod:`~polter.wire.ssh` here, :mod:`~polter.wire.relay` there). Pure models and
plain asyncio streams: the window, the host and the command line all import it.
"""
