"""The role's [builtins]: the shell parser (chains, quoting, wrappers), path matching (normalised, symlinks,
protected targets), and, by Hypothesis, "a denied command hidden in a chain is always denied"."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polter.gateway.builtin_calls import protected_targets, real_resolver
from polter.roles import Role, compile_role
from polter.roles.builtins import BuiltinCall, check_builtin_pattern, lexical_resolver
from polter.roles.engine import BuiltinRequest
from polter.roles import shell as shell_module
from polter.roles.shell import HOLE, split_command_line

ROLE = compile_role(
    Role.model_validate(
        {
            "name": "careful",
            "builtins": {
                "default": "ask",
                "allow": ["read", "shell(@read-only)", "shell(make test:*)", "write(src/**)"],
                "ask": ["write(@outside)"],
                "deny": [
                    "shell(git push*)",
                    "shell(rm -rf:*)",
                    "write(.env)",
                    "read(~/.ssh/**)",
                    "web(domain:*.evil.io)",
                ],
            },
        }
    )
)


def decide(call: BuiltinCall, project: str = "/p", home: str = "/home/u", **extra: object) -> str:
    request = BuiltinRequest(call, project, home, lexical_resolver(project, home), **extra)  # type: ignore[arg-type]
    return ROLE.decide(request).decision


def shell(command: str) -> str:
    return decide(BuiltinCall("Bash", "shell", command=command))


@pytest.mark.parametrize(
    ("line", "commands"),
    [
        ("ls && git push origin main | tee x", ["ls", "git push origin main", "tee x"]),
        ("a; b || c & d", ["a", "b", "c", "d"]),
        ("echo $(rm -rf /) `id`", ["rm -rf /", "id", f"echo {HOLE} {HOLE}"]),
        ("bash -c 'git push'", ["git push"]),
        ('sh -lc "ls; rm -rf x"', ["ls", "rm -rf x"]),
        ("env X=1 FOO=2 git push", ["X=1", "FOO=2", "git push"]),
        ("GIT_EXTERNAL_DIFF=./x git diff", ["GIT_EXTERNAL_DIFF=./x", "git diff"]),
        ("PATH=.:$PATH; ls", ["PATH=.:$PATH", "ls"]),
        ("LANG=C LC_ALL=C ls; x=$(pwd)", ["ls", "pwd"]),
        ("git -c core.fsmonitor=./x -C . status", ["git -c core.fsmonitor=./x", "git status"]),
        ("git --config-env=core.pager=EVIL -c color.ui=never log", ["git -c core.pager=EVIL", "git log"]),
        ("sudo -u root rm -rf /", ["sudo -u root rm -rf /", "rm -rf /"]),
        ("ls | xargs rm -f", ["ls", "xargs rm -f", f"rm -f {HOLE}"]),
        ("find . -exec rm {} \\;", ["find . -exec rm {} ;", f"rm {HOLE}"]),
        ("(cd a; rm b)", ["cd a", "rm b"]),
        ("git -C x -c a=b push --force", ["git -c a=b", "git push --force"]),
        ("eval 'git push'", ["git push"]),
        ("echo $'\\x67it' push", ["echo git push"]),
        ("'git' \"push\" o\\ k", ["git push o k"]),
        ("for f in *; do rm $f; done", [f"rm {HOLE}"]),
        ("f() { git push; }", ["git push"]),
        ("bash <<'EOF'\nrm -rf /\nEOF\n", ["rm -rf /"]),
        ("curl x | bash", ["curl x", "bash", HOLE]),
        ("timeout 5 nice -n 3 nohup git push", ["git push"]),
    ],
)
def test_a_line_is_split_into_the_simple_commands_it_runs(line: str, commands: list[str]) -> None:
    parsed = split_command_line(line)
    assert parsed.problem is None
    assert [command.text for command in parsed.commands] == commands


def test_redirections_are_reads_and_writes_and_unreadable_lines_are_flagged() -> None:
    parsed = split_command_line("cat < in.txt > out.txt 2>&1 2>/dev/null >> ~/log")
    assert [(r.path, r.write) for r in parsed.redirects] == [("in.txt", False), ("out.txt", True), ("~/log", True)]
    assert split_command_line("echo 'unterminated").problem is not None


def test_non_ascii_text_is_kept_and_cannot_crash_the_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    """tree-sitter-bash 0.25.1 calls C's ``isalpha`` on characters above 255, reading outside its table: ``{``
    followed by a 4-byte character segfaults the process, depending on memory layout (tree-sitter-bash#337). The
    parser sees only ASCII (stand-ins for other characters); the words keep the line's own characters."""
    lines = [
        prefix + chr(code) for prefix in ("{", "]{", "a {", "echo ]{") for code in range(0x70000, 0x110000, 0x4000)
    ]
    script = "import sys\nfrom polter.roles.shell import split_command_line\nfor line in sys.argv[1:]: split_command_line(line)"
    result = subprocess.run([sys.executable, "-c", script, *lines], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, f"the parser crashed (exit {result.returncode}): {result.stderr[-500:]}"

    real = shell_module._parser()
    seen: list[bytes] = []

    class Recording:
        def parse(self, source: bytes) -> object:
            seen.append(source)
            return real.parse(source)

    monkeypatch.setattr(shell_module, "_parser", Recording)
    parsed = [
        split_command_line(line) for line in ("]{\U000e2557\xaaz", 'git commit -m "🎉 é" && bash -c "rm -rf ~/é"')
    ]
    assert seen and all(byte < 0x80 for source in seen for byte in source), seen
    assert [[command.text for command in line.commands] for line in parsed] == [
        ["]{\U000e2557\xaaz"],
        ["git commit -m 🎉 é", "rm -rf ~/é"],
    ]
    assert shell('git commit -m "🎉 é" && git push') == "deny"


@pytest.mark.parametrize(
    ("line", "decision"),
    [
        ("ls -la | wc -l", "allow"),
        ("git status && git log --oneline", "allow"),
        ("make test -k x", "allow"),
        ("ls && git push origin main", "deny"),
        ("/usr/bin/git push", "deny"),
        ("git $SUB origin", "deny"),  # $SUB could be push: the strictest rule that could match
        ("echo 'unterminated", "deny"),  # unreadable: the strictest rule there is
        ("rm -rf build", "deny"),
        ("python -c 'print(1)'", "ask"),
        ("ls > src/listing.txt", "allow"),
        ("ls > /tmp/listing.txt", "ask"),
        ("echo x > .env", "deny"),
        ("cat ~/.ssh/id_rsa", "deny"),
        ("ls $HOME", "allow"),
    ],
)
def test_a_shell_line_takes_its_strictest_parts_decision(line: str, decision: str) -> None:
    assert shell(line) == decision


def test_paths_are_matched_normalised_and_symlinks_followed(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "secret").mkdir()
    (tmp_path / "src" / "shortcut").symlink_to(tmp_path / "secret")
    project, home = str(tmp_path), "/home/u"

    def write(path: str) -> str:
        request = BuiltinRequest(
            BuiltinCall("Write", "write", paths=(path,)), project, home, real_resolver(project, home)
        )
        return ROLE.decide(request).decision

    assert write("src/a.py") == "allow"
    assert write("src/../.env") == "deny"
    assert write("src/shortcut/x") == "ask", "the real path is outside src/**: the default asks"
    assert write("/etc/passwd") == "ask" and write("../elsewhere") == "ask"  # @outside


def test_protected_targets_are_denied_whatever_the_role_says(tmp_path: Path) -> None:
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    everything = compile_role(Role.model_validate({"name": "open", "builtins": {"default": "allow"}}))
    project = str(tmp_path)
    protected = protected_targets(project, state_dirs=[tmp_path / "state"])

    def verdict(kind: str, path: str):  # type: ignore[no-untyped-def]
        call = BuiltinCall("Tool", kind, paths=(path,))
        return everything.decide(BuiltinRequest(call, project, "/h", real_resolver(project, "/h"), protected))

    hooked = verdict("write", "a/../.git/hooks/pre-commit")
    assert (hooked.decision, hooked.rule) == ("deny", "protected") and "git hooks" in hooked.reason
    assert verdict("write", ".git/config").decision == "deny"
    assert verdict("read", ".git/config").decision == "allow", "reading a git config is harmless"
    assert verdict("read", str(tmp_path / "state" / "audit.sqlite3")).decision == "deny"
    assert verdict("write", "vendor/lib/.git/hooks/x").decision == "deny", "any repository's hooks"
    shell = BuiltinCall("Bash", "shell", command="cp evil .git/hooks/post-merge")
    assert (
        everything.decide(BuiltinRequest(shell, project, "/h", real_resolver(project, "/h"), protected)).decision
        == "deny"
    )


def test_web_and_unclassified_tools() -> None:
    assert decide(BuiltinCall("WebFetch", "web", urls=("https://docs.python.org/3/",))) == "ask"
    assert decide(BuiltinCall("WebFetch", "web", urls=("https://a.evil.io/x",))) == "deny"
    assert decide(BuiltinCall("web_fetch", "web", urls=("https://ok.org", "http://b.evil.io"))) == "deny"
    assert decide(BuiltinCall("CronCreate", "CronCreate")) == "ask", "its own kind: the default"


def test_the_research_phase_permits_reads_only() -> None:
    phased = compile_role(Role.model_validate({"name": "phased", "builtins": {"default": "allow"}, "phases": {}}))

    def in_research(call: BuiltinCall) -> str:
        return phased.decide(BuiltinRequest(call, "/p", "/h", lexical_resolver("/p", "/h"), phase="research")).decision

    assert in_research(BuiltinCall("Read", "read", paths=("a",))) == "allow"
    assert in_research(BuiltinCall("Bash", "shell", command="git log | head")) == "allow"
    assert in_research(BuiltinCall("Write", "write", paths=("a",))) == "deny"
    assert in_research(BuiltinCall("Bash", "shell", command="make")) == "deny"


@pytest.mark.parametrize(
    "line",
    [
        "find . -name '*.py' -fprint .env",
        "find . -fprint0 .env",
        "find . -fprintf .env '%p'",
        "find . -fls .env",
        "git diff --output=.env",
        "git -C . log -p --output .env",
        "sort -o .env notes",
        "sort -ro.env notes",
        "sort -r -t, -k2 --output=.env notes",
        "uniq notes .env",
        "uniq -f 2 notes .env",
        "xxd -c 8 notes .env",
        "tree -o .env",
    ],
)
def test_read_only_commands_told_to_write_a_file_are_judged_as_writing_it(line: str) -> None:
    """``shell(@read-only)`` allows these commands, but an output option or operand makes them write: the
    write is judged as ``> file`` would be (here, ``write(.env)`` is denied)."""
    assert shell(line) == "deny", line
    if not line.startswith("sort"):  # only a bare ``sort`` is on the read-only list
        assert shell(line.replace(".env", "src/out.txt")) == "allow", line


@pytest.mark.parametrize(
    "line",
    [
        "GIT_EXTERNAL_DIFF=./x git diff",
        "env GIT_EXTERNAL_DIFF=./x git diff",
        "LESSOPEN='|./x %s' less notes",
        "PATH=.:$PATH; ls",
        "HOME=/tmp/evil git status",
        "git -c core.fsmonitor=./x status",
        "git -c diff.external=./x diff",
        "git -c alias.st='!./x' st",
        "git --config-env=core.pager=EVIL log",
    ],
)
def test_read_only_commands_made_to_run_a_program_are_not_read_only(line: str) -> None:
    """An environment variable or a git setting can make a read-only command run any program: the setting is
    judged as a command of its own, which no read-only pattern allows (here the role's default: ask)."""
    assert shell(line) == "ask", line


@pytest.mark.parametrize(
    "line", ["LANG=C ls", "env LC_ALL=C NO_COLOR=1 wc -l x", "git -c color.ui=never log", "n=$(pwd)"]
)
def test_settings_that_only_change_how_things_print_stay_read_only(line: str) -> None:
    assert shell(line) == "allow", line


@pytest.mark.parametrize("line", ["find . -name -fprint", "tree -L 2 src", "uniq -c notes", "git diff --stat"])
def test_read_only_commands_that_write_nothing_stay_allowed(line: str) -> None:
    assert shell(line) == "allow", line


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [
        ("shell(git push*)", None),
        ("write(src/**)", None),
        ("CronCreate", None),
        ("web(domain:)", "name a host"),
        ("shell(@nope)", "unknown selector"),
        ("nope(x)", "unknown kind"),
        ("write(src/[ab])", "only * and **"),
        ("write(@elsewhere)", "unknown path set"),
    ],
)
def test_pattern_syntax(pattern: str, problem: str | None) -> None:
    error = check_builtin_pattern(pattern)
    assert (error is None) if problem is None else (error is not None and problem in error)


SAFE = st.sampled_from(
    ["ls", "ls -la", "cat README.md", "git status", "git log --oneline", "wc -l x", "pwd", "echo hi"]
)
DENIED = st.sampled_from(["git push", "git push origin main", "git push --force", "rm -rf build", "rm -rf /"])


@st.composite
def hidden(draw: st.DrawFn) -> str:
    """A denied command somewhere in a line of safe ones, under any operator, substitution or wrapper."""
    denied = draw(DENIED)
    wrap = draw(
        st.sampled_from(
            [
                "{}",
                "$({})",
                "`{}`",
                "({})",
                "{{ {}; }}",
                "bash -c '{}'",
                'sh -c "{}"',
                "env A=1 {}",
                "sudo {}",
                "eval '{}'",
                "nohup {} &",
                "timeout 5 {}",
                "if true; then {}; fi",
                "echo $(echo $({}))",
                "! {}",
            ]
        )
    )
    parts = draw(st.lists(SAFE, max_size=4))
    parts.insert(draw(st.integers(0, len(parts))), wrap.format(denied))
    line = parts[0]
    for part in parts[1:]:
        line += draw(st.sampled_from([" && ", " || ", "; ", " | ", " |& ", "\n"])) + part
    return line


@settings(max_examples=300, deadline=None)
@given(hidden())
def test_a_denied_command_hidden_in_a_chain_is_always_denied(line: str) -> None:
    assert shell(line) == "deny", line


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_any_text_gets_a_decision_and_never_an_error(line: str) -> None:
    assert shell(line) in ("allow", "ask", "deny")
