"""The other spellings of one command that a role's ask and deny rules must also catch.

Roles write ``shell(git push --force*)`` or ``shell(kubectl delete:*)``; agents write ``git push -uf``,
``git push origin +main``, ``kubectl --context prod delete``. A command is matched against these spellings
too, for ask and deny rules only (a spelling never earns an allow): global options before the subcommand
dropped, combined short flags split (``-xdf`` → ``-x -d -f``), each option moved right after the subcommand,
and the flags that mean the same thing (a ``+`` refspec, ``--mirror`` and ``--delete`` drop commits on the
remote as ``--force`` does). Pure.
"""

from __future__ import annotations

from polter.roles.shell import HOLE

__all__ = ["strict_spellings"]

MAX_SPELLINGS = 48
"""Bounds the spellings per command (each one is matched against every ask and deny rule)."""

_GLOBAL_VALUE_OPTIONS = {
    "kubectl": {
        "--context",
        "--namespace",
        "-n",
        "--kubeconfig",
        "--cluster",
        "--user",
        "-s",
        "--server",
        "--token",
        "--as",
        "--as-group",
        "--request-timeout",
        "--certificate-authority",
        "-v",
        "--profile",
    },
    "helm": {
        "--kube-context",
        "--namespace",
        "-n",
        "--kubeconfig",
        "--registry-config",
        "--repository-config",
        "--kube-apiserver",
        "--kube-token",
        "--kube-as-user",
    },
    "docker": {"-H", "--host", "--context", "-c", "--config", "-l", "--log-level"},
    "git": {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env"},
    "systemctl": {"-H", "--host", "-M", "--machine", "-t", "--type", "-p", "--property"},
}
"""Options before a tool's subcommand that take a value (``kubectl --context prod delete``)."""

_SAME_AS: dict[tuple[str, str], dict[str, tuple[str, ...]]] = {
    ("git", "push"): {
        "-f": ("--force",),
        "--force": ("-f",),
        "--force-with-lease": ("--force", "-f"),
        "--force-if-includes": ("--force", "-f"),
        "--mirror": ("--force", "-f"),
        "--delete": ("--force", "-f"),
        "-d": ("--force", "-f"),
        "--prune": ("--force", "-f"),
    },
    ("git", "clean"): {"--force": ("-f",), "-f": ("--force",)},
    ("git", "branch"): {"--delete": ("-d",), "--force": ("-f",), "-D": ("--delete", "-d")},
    ("git", "tag"): {"--delete": ("-d",)},
    ("git", "checkout"): {"--force": ("-f",)},
}
"""Flags that mean what another spelling means, per (program, subcommand)."""


def strict_spellings(words: tuple[str, ...]) -> list[str]:
    """Other spellings of ``words`` (as rule text: words joined by spaces), without the one written."""
    if not words or HOLE in words[0]:
        return []
    found: list[str] = []
    base = words[0].rsplit("/", 1)[-1]
    if base != words[0]:
        found.append(" ".join((base, *words[1:])))  # ./rm is not rm, but a rule about rm still asks
    for trimmed in _without_global_options((base, *words[1:])):
        if trimmed != words:
            found.append(" ".join(trimmed))
        found += _moved_flags(trimmed)
        if len(found) >= MAX_SPELLINGS:
            break
    written = " ".join(words)
    unique = list(dict.fromkeys(spelling for spelling in found if spelling != written))
    return unique[:MAX_SPELLINGS]


def _without_global_options(words: tuple[str, ...]) -> list[tuple[str, ...]]:
    """``words`` with the options before the subcommand dropped: once taking the values the tool is known to
    take, once taking a value after every option that is not ``--x=v`` (an unknown tool's)."""
    known = _GLOBAL_VALUE_OPTIONS.get(words[0], set())
    results = [words]
    for guess in (False, True):
        index = 1
        while index < len(words) and words[index].startswith("-") and words[index] != "--":
            option = words[index].split("=", 1)[0]
            takes = "=" not in words[index] and (option in known or guess)
            index += 2 if takes and index + 1 < len(words) and not words[index + 1].startswith("-") else 1
        if index > 1:
            results.append((words[0], *words[index:]))
    if words[0] == "terraform":  # terraform -chdir=x destroy
        results.append((words[0], *[word for word in words[1:] if not word.startswith("-chdir")]))
    return list(dict.fromkeys(results))


def _moved_flags(words: tuple[str, ...]) -> list[str]:
    """Each flag (split out of a short group, and its synonyms) moved right after the subcommand."""
    if len(words) < 2 or words[1].startswith("-"):
        return []
    head, arguments = words[:2], words[2:]
    flags: list[str] = []
    operands: list[str] = []
    for word in arguments:
        if word.startswith("--") or word == "-":
            flags.append(word)
        elif word.startswith("-") and len(word) > 2 and word[1:].isalpha():
            flags += [f"-{letter}" for letter in word[1:]]
            flags.append(word)
        elif word.startswith("-"):
            flags.append(word)
        else:
            operands.append(word)
    same = _SAME_AS.get((head[0], head[1]), {})
    if head == ("git", "push") and any(word.startswith(("+", ":")) for word in operands):
        flags += ["--force", "-f"]  # a + refspec forces, a :branch deletes
    for flag in list(flags):
        flags += same.get(flag.split("=", 1)[0], ())
    rest = list(arguments)
    return [" ".join((*head, flag, *rest)) for flag in dict.fromkeys(flags)][:MAX_SPELLINGS]
