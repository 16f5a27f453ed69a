"""``polter hook ADAPTER [PROJECT [RUNTIME_DIR]]``: the veto hook an AI CLI runs before a tool call.

The same as :mod:`polter.hook_client` (what adapters write into the CLIs' configs, run as
``python -I -S .../hook_client.py`` so it starts in milliseconds): it forwards the CLI's payload on stdin to
the gateway, which translates and judges it, and prints the answer in the CLI's own format. Fails closed.
``benchmarks/hook.py`` measures both.
"""

from __future__ import annotations

import argparse

__all__ = ["main", "register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "hook",
        help="the veto hook an AI CLI runs before a tool call (reads its payload on stdin)",
        description="Ask the Polter gateway whether the tool call described on stdin may run, and answer in "
        "the CLI's hook format. Denies when the gateway cannot be reached.",
    )
    parser.add_argument("adapter", help="the adapter whose hook format stdin and stdout use, e.g. claude-code")
    parser.add_argument("project", nargs="?", default="", help="the pane's directory (paths are judged against it)")
    parser.add_argument("runtime_dir", nargs="?", default="", help="the pane's runtime dir (protected)")
    parser.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    return main([args.adapter, args.project, args.runtime_dir])


def main(argv: list[str] | None = None) -> int:
    import sys

    from polter import hook_client

    return hook_client.main(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    raise SystemExit(main())
