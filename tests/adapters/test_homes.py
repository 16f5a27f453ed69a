"""A CLI's own state in a moved home stays the user's: StateHome (the contract) and the host's linking and
rescue (polter.adapters._homes), on real files in temporary homes."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from pydantic import ValidationError

from polter.adapters import EditedConfig, PaneFile, PreparedPane, StateHome
from polter.adapters.plugins import RuntimeDir, link_homes, remove_runtime_dir, rescue_homes, write_pane_files
from polter.adapters._homes import MANIFEST
from polter.terminal.launch import LaunchSpec

LAUNCH = LaunchSpec(argv=("cli",))
POLTER_FILES = {"cli/config.json": PaneFile(text='{"mcp": "the gateway"}')}


def cli_home(user: Path, **overrides: object) -> StateHome:
    values: dict[str, object] = {
        "folder": "cli",
        "user_folder": user,
        "keep": ("sessions/", "history.jsonl", "auth.json"),
        "scratch": ("bundled", "*.lock"),
    }
    values.update(overrides)
    return StateHome(**values)  # type: ignore[arg-type]


def start(runtime: Path, home: StateHome, files: dict[str, PaneFile] | None = None) -> Path:
    """What the host does when a pane starts: the runtime dir, Polter's files, the kept state linked."""
    RuntimeDir(runtime).create()
    write_pane_files(runtime, POLTER_FILES if files is None else files, (home,))
    return runtime / "cli"


def replace_atomically(path: Path, text: str) -> None:
    """How many CLIs save a file (Qwen Code's login, for one): a temporary file renamed over the path."""
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text)
    os.replace(temporary, path)


def test_a_state_home_is_data_checked_on_construction(tmp_path: Path) -> None:
    home = cli_home(tmp_path / "user")
    assert home.kept() == {"sessions": True, "history.jsonl": False, "auth.json": False}
    for bad in ({"folder": "/abs"}, {"folder": "../up"}, {"user_folder": Path("relative")}, {"keep": ("../x",)},
                {"keep": ("/etc/passwd",)}, {"scratch": ("a/../../b",)}, {"unknown": 1}):
        with pytest.raises(ValidationError):
            cli_home(tmp_path, **bad)


def test_polter_files_may_not_lie_in_a_kept_entry(tmp_path: Path) -> None:
    """They would be written through the link into the user's home."""
    home = cli_home(tmp_path / "user")
    for name in ("cli/sessions/x.json", "cli/auth.json"):
        with pytest.raises(ValidationError, match="keeps in the user's home"):
            PreparedPane(launch=LAUNCH, files={name: PaneFile(text="")}, homes=(home,))
    PreparedPane(launch=LAUNCH, files={"cli/config.json": PaneFile(text=""), "other/auth.json": PaneFile(text="")},
                 homes=(home,))


def test_kept_state_is_the_users_own_while_the_pane_runs(tmp_path: Path) -> None:
    """A fresh user: a kept folder is created in their home; a kept file is created there by the CLI's write."""
    user = tmp_path / "home" / ".cli"
    folder = start(tmp_path / "run" / "p1", cli_home(user))
    assert stat.S_IMODE(user.stat().st_mode) == 0o700 and (user / "sessions").is_dir()
    assert (folder / "sessions").resolve() == (user / "sessions").resolve()
    (folder / "sessions" / "one.jsonl").write_text("turn 1\n")
    with open(folder / "history.jsonl", "a") as history:  # an append through a dangling link creates the file
        history.write("hello\n")
    assert (user / "sessions" / "one.jsonl").read_text() == "turn 1\n"
    assert (user / "history.jsonl").read_text() == "hello\n"
    manifest = tmp_path / "run" / "p1" / MANIFEST
    assert stat.S_IMODE(manifest.stat().st_mode) == 0o600
    assert json.loads(manifest.read_text())["homes"][0]["polter_files"] == ["config.json"]


def test_closing_the_pane_moves_what_the_cli_left_and_removes_the_rest(tmp_path: Path) -> None:
    user = tmp_path / "home" / ".cli"
    runtime = tmp_path / "run" / "p1"
    folder = start(runtime, cli_home(user))
    replace_atomically(folder / "auth.json", '{"token": "first login"}')  # the link is now a file of the pane
    (folder / "installation_id").write_text("abc")  # not declared: moved all the same
    (folder / "logs" / "2026").mkdir(parents=True)
    (folder / "logs" / "2026" / "today.log").write_text("log")
    (folder / "bundled").mkdir()
    (folder / "bundled" / "SKILL.md").write_text("a copy of a bundled file")  # scratch
    (folder / "pane.lock").write_text("")  # scratch
    (folder / "config.json").write_text('{"mcp": "the gateway", "edited": true}')  # Polter's: not the user's

    RuntimeDir(runtime).remove()

    assert not runtime.exists()
    assert (user / "auth.json").read_text() == '{"token": "first login"}'
    assert (user / "installation_id").read_text() == "abc"
    assert (user / "logs" / "2026" / "today.log").read_text() == "log"
    assert sorted(path.name for path in user.iterdir()) == [
        "auth.json", "history.jsonl", "installation_id", "logs", "sessions"]
    assert (user / "history.jsonl").read_text() == "", "a missing kept file is created empty, for the link"
    assert not (user / "config.json").exists() and not (user / "bundled").exists() and not (user / "pane.lock").exists()


def test_a_missing_kept_json_file_is_the_panes_own_until_it_ends(tmp_path: Path) -> None:
    """An empty JSON file would not parse, and a pane's sandbox lets the CLI write only what exists: a missing one
    is not linked; the CLI writes its own in the pane's folder, which is moved to the user's when the pane ends."""
    user = tmp_path / "home" / ".cli"
    runtime = tmp_path / "run" / "p1"
    folder = start(runtime, cli_home(user, keep=("projects.json", "history.jsonl")))
    assert not os.path.lexists(folder / "projects.json") and not (user / "projects.json").exists()
    assert (folder / "history.jsonl").is_symlink()
    (folder / "projects.json").write_text('{"projects": {}}')
    RuntimeDir(runtime).remove()
    assert (user / "projects.json").read_text() == '{"projects": {}}'


def test_a_copied_file_is_the_panes_own_copy_and_goes_back_unless_the_user_changed_it(tmp_path: Path) -> None:
    """``copied``: a kept file the CLI locks beside the file a link points to is copied in (so the lock is taken in
    the pane's folder) and moved back at the end, but never over a user's file changed meanwhile."""
    user = tmp_path / "home" / ".cli"
    user.mkdir(parents=True)
    (user / "projects.json").write_text('{"projects": {"/a": "a"}}')
    home = cli_home(user, keep=("projects.json", "history.jsonl"), copied=("projects.json",))
    for bad in ({"copied": ("other.json",)}, {"copied": ("sessions/",)}):
        with pytest.raises(ValidationError):
            cli_home(user, **bad)
    first, second = tmp_path / "run" / "p1", tmp_path / "run" / "p2"
    one, two = start(first, home), start(second, home)
    assert not (one / "projects.json").is_symlink() and (one / "projects.json").read_text() == '{"projects": {"/a": "a"}}'
    (one / "projects.json.lock").mkdir()  # the CLI's lock, in the pane's folder
    (one / "projects.json").write_text('{"projects": {"/a": "a", "/b": "b"}}')
    (two / "projects.json").write_text('{"projects": {"/a": "a", "/c": "c"}}')
    RuntimeDir(first).remove()
    assert (user / "projects.json").read_text() == '{"projects": {"/a": "a", "/b": "b"}}'
    RuntimeDir(second).remove()
    assert (user / "projects.json").read_text() == '{"projects": {"/a": "a", "/b": "b"}}', "the user's newer file stays"
    [beside] = user.glob("projects.json.polter-p2-*")
    assert beside.read_text() == '{"projects": {"/a": "a", "/c": "c"}}'


def test_what_the_humans_cli_runs_is_linked_and_never_taken_from_a_pane(tmp_path: Path) -> None:
    """``shared``: the user's extensions and trusted folders, kept, are linked so that the CLI sees them, but they are
    not the CLI's state (not writable in a sandbox), and what a pane leaves under a shared name (a link replaced by
    its own folder, a file matching a pattern, a hooks file never linked) is dropped at the end, never moved into
    the user's folder, where the human's own CLI would run it."""
    user = tmp_path / "home" / ".cli"
    (user / "extensions" / "mine").mkdir(parents=True)
    (user / "trusted.json").write_text('{"/home/me/project": "trusted"}')
    home = cli_home(user, keep=("sessions/", "history.jsonl", "extensions/", "trusted.json"),
                    shared=("extensions/", "trusted.json", "hooks.json", "skills/*", "*.profile.toml"))
    assert home.state() == {"sessions": True, "history.jsonl": False}
    assert home.is_shared("extensions/evil/x.json") and home.is_shared("work.profile.toml")
    assert home.is_shared("skills/evil") and not home.is_shared("skills") and not home.is_shared("sessions/a")
    runtime = tmp_path / "run" / "p1"
    folder = start(runtime, home)
    assert (folder / "extensions").resolve() == user / "extensions"
    assert (folder / "trusted.json").read_text() == '{"/home/me/project": "trusted"}'
    assert not os.path.lexists(folder / "hooks.json"), "shared but not kept: never linked"

    (folder / "extensions").unlink()  # what an agent would do: its own extension in place of the link
    (folder / "extensions" / "evil").mkdir(parents=True)
    (folder / "extensions" / "evil" / "gemini-extension.json").write_text('{"mcpServers": {"x": {"command": "sh"}}}')
    replace_atomically(folder / "trusted.json", '{"/tmp/planted": "trusted"}')
    (folder / "hooks.json").write_text('{"PreToolUse": "sh -c evil"}')
    (folder / "skills" / "evil").mkdir(parents=True)
    (folder / "skills" / "evil" / "SKILL.md").write_text("run evil")
    (folder / "work.profile.toml").write_text("evil = true")
    (folder / "notes.txt").write_text("the CLI's own")  # neither kept nor shared: moved as before

    rescue = rescue_homes(runtime)
    assert sorted(path.name for path in rescue.dropped) == [
        "evil", "extensions", "hooks.json", "trusted.json", "work.profile.toml"]
    assert sorted(path.name for path in (user / "extensions").iterdir()) == ["mine"]
    assert (user / "trusted.json").read_text() == '{"/home/me/project": "trusted"}'
    assert not (user / "hooks.json").exists() and not (user / "skills").exists()
    assert not (user / "work.profile.toml").exists()
    assert (user / "notes.txt").read_text() == "the CLI's own"


def test_a_kept_file_replaced_in_the_pane_follows_the_users_unless_they_changed_it(tmp_path: Path) -> None:
    user = tmp_path / "home" / ".cli"
    user.mkdir(parents=True)
    (user / "auth.json").write_text('{"token": "old"}')
    (user / "history.jsonl").write_text("mine\n")

    # The user's file untouched while the pane ran: the CLI's newer version replaces it (a refreshed token).
    folder = start(tmp_path / "run" / "p1", cli_home(user))
    replace_atomically(folder / "auth.json", '{"token": "refreshed"}')
    [rescue] = remove_runtime_dir(tmp_path / "run" / "p1")
    assert (user / "auth.json").read_text() == '{"token": "refreshed"}'
    assert rescue.replaced == [user / "auth.json"] and not rescue.kept_beside

    # The user's file changed meanwhile (another pane, the plain CLI): theirs stays, the pane's goes beside it.
    folder = start(tmp_path / "run" / "p2", cli_home(user))
    replace_atomically(folder / "auth.json", '{"token": "from the pane"}')
    replace_atomically(user / "auth.json", '{"token": "from elsewhere"}')
    replace_atomically(folder / "history.jsonl", "mine\nthe pane's\n")
    (user / "history.jsonl").write_text("mine\nthe plain CLI's\n")
    [rescue] = remove_runtime_dir(tmp_path / "run" / "p2")
    assert (user / "auth.json").read_text() == '{"token": "from elsewhere"}'
    assert (user / "history.jsonl").read_text() == "mine\nthe plain CLI's\n"
    beside = sorted(path.name for path in rescue.kept_beside)
    assert [name.split(".polter-p2-")[0] for name in beside] == ["auth.json", "history.jsonl"], beside
    assert (user / beside[0]).read_text() == '{"token": "from the pane"}'
    assert not (tmp_path / "run" / "p2").exists()


def test_the_users_newer_data_is_never_overwritten_nor_deleted(tmp_path: Path) -> None:
    """An undeclared file the user has too: theirs stays; the same content is not duplicated."""
    user = tmp_path / "home" / ".cli"
    (user / "notes").mkdir(parents=True)
    (user / "notes" / "a.md").write_text("the user's a")
    (user / "notes" / "same.md").write_text("same")
    (user / "state.json").write_text("the user's state")
    folder = start(tmp_path / "run" / "p1", cli_home(user))
    (folder / "notes").mkdir()
    (folder / "notes" / "a.md").write_text("the pane's a")
    (folder / "notes" / "b.md").write_text("the pane's b")
    (folder / "notes" / "same.md").write_text("same")
    (folder / "state.json").write_text("the pane's state")
    [rescue] = remove_runtime_dir(tmp_path / "run" / "p1")
    assert (user / "notes" / "a.md").read_text() == "the user's a"
    assert (user / "notes" / "b.md").read_text() == "the pane's b"
    assert (user / "state.json").read_text() == "the user's state"
    assert {path.read_text() for path in rescue.kept_beside} == {"the pane's a", "the pane's state"}
    assert sorted(path.name for path in (user / "notes").iterdir() if path.name.startswith("same")) == ["same.md"]


def test_a_restarted_pane_moves_only_what_replaced_a_link(tmp_path: Path) -> None:
    """The rest stays with the pane until it ends: the CLI may read it again after its restart."""
    user = tmp_path / "home" / ".cli"
    runtime = tmp_path / "run" / "p1"
    folder = start(runtime, cli_home(user))
    replace_atomically(folder / "auth.json", "login")
    (folder / "cache.json").write_text("cache")
    start(runtime, cli_home(user))  # the relaunch
    assert (user / "auth.json").read_text() == "login"
    assert (folder / "auth.json").is_symlink() and (folder / "auth.json").read_text() == "login"
    assert (folder / "cache.json").read_text() == "cache" and not (user / "cache.json").exists()
    RuntimeDir(runtime).remove()
    assert (user / "cache.json").read_text() == "cache"


def test_a_restart_keeps_the_settings_the_cli_wrote_before_polter_writes_its_config_again(tmp_path: Path) -> None:
    user = tmp_path / "home" / ".cli"
    home = cli_home(user, edited_configs=(EditedConfig(file="config.json", polter_keys=("mcp",)),))
    runtime = tmp_path / "run" / "p1"
    folder = start(runtime, home)
    (folder / "config.json").write_text('{"mcp": "the gateway", "theme": "dark"}')  # the user picks a theme
    start(runtime, home)  # a restart: Polter writes its config.json again
    assert json.loads((folder / "config.json").read_text()) == {"mcp": "the gateway"}
    assert json.loads((user / "config.json").read_text()) == {"theme": "dark"}
    RuntimeDir(runtime).remove()
    assert json.loads((user / "config.json").read_text()) == {"theme": "dark"}


def test_a_dead_apps_run_dir_is_sorted_out_pane_by_pane(tmp_path: Path) -> None:
    run = tmp_path / "state" / "run" / "4242"
    users = [tmp_path / "home" / ".cli", tmp_path / "home" / ".other"]
    for pane, user in zip(("p1", "p2"), users, strict=True):
        folder = start(run / pane, cli_home(user))
        (folder / "sessions" / f"{pane}.jsonl").write_text(pane)  # written through the link
        (folder / "new.json").write_text(pane)  # left in the pane when the app was killed
    (run / "servers.toml").write_text("[servers]\n")
    rescues = remove_runtime_dir(run)
    assert sorted(rescue.pane for rescue in rescues) == ["p1", "p2"]
    assert not run.exists()
    for pane, user in zip(("p1", "p2"), users, strict=True):
        assert (user / "sessions" / f"{pane}.jsonl").read_text() == pane
        assert (user / "new.json").read_text() == pane


def test_a_failed_rescue_keeps_the_runtime_dir_for_the_next_start(tmp_path: Path) -> None:
    user = tmp_path / "home" / ".cli"
    runtime = tmp_path / "run" / "p1"
    folder = start(runtime, cli_home(user))
    (folder / "new.json").write_text("the CLI's")
    user.rename(tmp_path / "home" / ".cli-moved")
    user.write_text("something else stands where the user's folder was")
    [rescue] = remove_runtime_dir(runtime)
    assert rescue.failed and (folder / "new.json").read_text() == "the CLI's", "nothing lost"
    user.unlink()
    user.mkdir()
    remove_runtime_dir(runtime)
    assert not runtime.exists() and (user / "new.json").read_text() == "the CLI's"


def test_a_pane_without_homes_is_simply_removed(tmp_path: Path) -> None:
    runtime = tmp_path / "run" / "p1"
    RuntimeDir(runtime).create()
    write_pane_files(runtime, {"opencode/polter-veto.js": PaneFile(text="//")})
    assert not (runtime / MANIFEST).exists()
    assert rescue_homes(runtime).moved == []
    RuntimeDir(runtime).remove()
    assert not runtime.exists()


def test_link_homes_records_nothing_without_homes(tmp_path: Path) -> None:
    runtime = tmp_path / "run" / "p1"
    RuntimeDir(runtime).create()
    link_homes(runtime, {}, ())
    assert not (runtime / MANIFEST).exists()


def test_the_workspace_sorts_out_a_dead_apps_run_dir_at_start(tmp_path: Path) -> None:
    """Workspace._prepare_run_dir (the app's start) goes through RuntimeDir.remove, so a killed app's panes'
    CLI state reaches the user's home. (Moves with the workspace into the session host, issue 11.)"""
    from polter.host.workspace import Workspace

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    run = tmp_path / "state" / "run" / dead.stdout.strip()
    user = tmp_path / "home" / ".cli"
    folder = start(run / "p1", cli_home(user))
    (folder / "left-behind.json").write_text("the CLI's")
    Workspace(state_dir=tmp_path / "state")._prepare_run_dir()
    assert not run.exists()
    assert (user / "left-behind.json").read_text() == "the CLI's"


def test_paths_a_cli_records_in_its_database_name_the_users_folder_after_the_pane(tmp_path: Path) -> None:
    """Codex's thread index records each conversation's file under CODEX_HOME, i.e. the pane's folder."""
    user = tmp_path / "home" / ".cli"
    runtime = tmp_path / "run" / "p1"
    folder = start(runtime, cli_home(user, keep=("index.sqlite", "sessions/"), sqlite_path_records=("index.sqlite",)))
    with sqlite3.connect(folder / "index.sqlite") as db:  # created through the link, in the user's folder
        db.execute("CREATE TABLE threads (id INTEGER, rollout_path TEXT, note TEXT, size INTEGER)")
        db.executemany("INSERT INTO threads VALUES (?, ?, ?, ?)", [
            (1, f"{folder}/sessions/a.jsonl", "mentions " + str(folder), 3),
            (2, f"{user}/sessions/b.jsonl", None, 4),
            (3, f"{folder}x/sessions/c.jsonl", "", 5),
        ])
    RuntimeDir(runtime).remove()
    with sqlite3.connect(user / "index.sqlite") as db:
        rows = db.execute("SELECT id, rollout_path, note, size FROM threads ORDER BY id").fetchall()
    assert rows == [(1, f"{user}/sessions/a.jsonl", "mentions " + str(folder), 3),
                    (2, f"{user}/sessions/b.jsonl", None, 4), (3, f"{folder}x/sessions/c.jsonl", "", 5)]


def test_settings_the_cli_adds_to_polters_toml_are_added_to_the_users(tmp_path: Path) -> None:
    """Codex records a folder's trust in config.toml: it reaches the user's, whose text stays byte for byte."""
    user = tmp_path / "home" / ".codex"
    user.mkdir(parents=True)
    mine = '# my settings\nmodel = "gpt-9"\n\n[projects."/src/a"]\ntrust_level = "trusted"\n'
    (user / "config.toml").write_text(mine)
    polter = 'model = "gpt-9"\n\n[mcp_servers.time]\nurl = "http://gateway"\n\n[projects."/src/a"]\ntrust_level = "trusted"\n'
    home = StateHome(folder="codex", user_folder=user, keep=("sessions/",),
                     edited_configs=(EditedConfig(file="config.toml", polter_keys=("mcp_servers",)),))
    runtime = tmp_path / "run" / "p1"
    RuntimeDir(runtime).create()
    write_pane_files(runtime, {"codex/config.toml": PaneFile(text=polter)}, (home,))
    (runtime / "codex" / "config.toml").write_text(  # what Codex writes when the user trusts /src/b and picks a model
        'model = "gpt-10"\nnew_setting = 1\n\n[mcp_servers.time]\nurl = "http://gateway"\n\n[mcp_servers.mine]\nurl = "x"\n'
        '\n[projects."/src/a"]\ntrust_level = "trusted"\n\n[projects."/src/b"]\ntrust_level = "trusted"\n')
    [rescue] = remove_runtime_dir(runtime)
    text = (user / "config.toml").read_text()
    assert mine in text, "the user's own text is kept as it was"
    assert tomllib.loads(text) == {"model": "gpt-9", "new_setting": 1, "projects": {
        "/src/a": {"trust_level": "trusted"}, "/src/b": {"trust_level": "trusted"}}}
    assert sorted(rescue.settings_added) == [f"{user / 'config.toml'}: new_setting",
                                            f"{user / 'config.toml'}: projects./src/b.trust_level"]


def test_settings_the_cli_adds_to_polters_json_are_added_to_the_users(tmp_path: Path) -> None:
    """Gemini CLI records the sign-in chosen at a first start in settings.json: the user's gets it."""
    user = tmp_path / "home" / ".gemini"
    home = StateHome(folder="gemini-cli/.gemini", user_folder=user, keep=("oauth_creds.json",),
                     edited_configs=(EditedConfig(file="settings.json", polter_keys=("mcpServers", "hooks")),))
    runtime = tmp_path / "run" / "p1"
    RuntimeDir(runtime).create()
    polter = {"mcpServers": {"time": {"httpUrl": "http://gateway"}}, "hooks": {"BeforeTool": []}}
    write_pane_files(runtime, {"gemini-cli/.gemini/settings.json": PaneFile(text=json.dumps(polter))}, (home,))
    pane_settings = runtime / "gemini-cli" / ".gemini" / "settings.json"
    pane_settings.write_text(json.dumps({**polter, "hooks": {"BeforeTool": [{"x": 1}]},
                                         "security": {"auth": {"selectedType": "oauth-personal"}}}))
    remove_runtime_dir(runtime)
    assert json.loads((user / "settings.json").read_text()) == {"security": {"auth": {"selectedType": "oauth-personal"}}}
    assert stat.S_IMODE((user / "settings.json").stat().st_mode) == 0o600

    # A user's file with comments is not rewritten: the setting stays with the pane, reported.
    (user / "settings.json").write_text('{\n  // mine\n  "ui": {"theme": "Dracula"}\n}\n')
    RuntimeDir(runtime).create()
    write_pane_files(runtime, {"gemini-cli/.gemini/settings.json": PaneFile(text=json.dumps(polter))}, (home,))
    pane_settings.write_text(json.dumps({**polter, "ui": {"theme": "Light"}, "general": {"vimMode": True}}))
    [rescue] = remove_runtime_dir(runtime)
    assert (user / "settings.json").read_text() == '{\n  // mine\n  "ui": {"theme": "Dracula"}\n}\n'
    assert rescue.settings_left and "not plain JSON" in rescue.settings_left[0]
    assert not runtime.exists(), "a setting that could not be added does not keep the runtime dir"
