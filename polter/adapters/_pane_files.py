"""The files a plugin has Polter write for its CLI in a pane: new files (:class:`PaneFile`), the user's config
files edited for the pane (:class:`EditedConfig`), and where the CLI keeps its state (:class:`StateHome`). Part
of the adapter contract (:mod:`polter.adapters` exports them)."""

from __future__ import annotations

import fnmatch
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = ["EditedConfig", "PaneFile", "StateHome"]


class PaneFile(BaseModel):
    """A file Polter writes into the pane's runtime dir before the CLI starts."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    text: str | None = Field(default=None, description="The file's content.")
    link_to: Path | None = Field(default=None, description="Make a symlink to this path instead (e.g. a login file).")
    mode: int = Field(default=0o600, description="Permission bits of a written file.")

    @field_validator("link_to")
    @classmethod
    def _absolute(cls, value: Path | None) -> Path | None:
        if value is not None and not value.is_absolute():
            raise ValueError("link_to must be an absolute path")
        return value

    def model_post_init(self, __context: Any) -> None:
        if (self.text is None) == (self.link_to is None):
            raise ValueError("a PaneFile has either text or link_to")


def _relative_posix(name: str, what: str) -> PurePosixPath:
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts or not path.parts or name.startswith("./"):
        raise ValueError(f"{what} {name!r} must be a relative path without '..'")
    return path


class EditedConfig(BaseModel):
    """A config file Polter writes into a moved home (from the user's own, plus Polter's keys) that the CLI also
    writes to when the user changes a setting in it (Codex records a folder's trust in config.toml, Gemini CLI and
    Qwen Code the sign-in chosen at the first start in settings.json)."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    file: str = Field(description="The file, relative to the home's folder; .json or .toml.")
    polter_keys: tuple[str, ...] = Field(
        default=(),
        description="Top-level keys that are Polter's (MCP servers, hooks, skill switches): edits under them stay "
        "with the pane. What the CLI added under any other key is added to the user's own file when the pane ends, "
        "where the user's file has nothing there yet: a setting the user has is never changed.",
    )

    @field_validator("file")
    @classmethod
    def _json_or_toml(cls, value: str) -> str:
        _relative_posix(value, "file")
        if not value.endswith((".json", ".toml")):
            raise ValueError(f"{value!r}: only .json and .toml config files are merged")
        return value


class StateHome(BaseModel):
    """A folder where the CLI keeps its config *and its own state*, moved into the pane's runtime dir (the adapter
    points the CLI's home variable there) so that Polter's generated config can sit in it.

    What the CLI writes there belongs to the user, not to the pane: Polter keeps it where the CLI keeps it
    without Polter (``user_folder``), whether or not it existed before the pane started. The host does the
    work, the same for every adapter (see ``docs/adapters.md``):

    - every ``keep`` entry is a symlink to the user's own file or folder while the pane runs, so the CLI reads
      and writes the user's (a missing folder is created empty in the user's folder; a missing file is created
      there by the CLI's first write through the link), and every pane and the plain CLI share it live;
    - when the pane ends (closed, restarted, or found dead at the next start), whatever else the CLI left in
      the folder, Polter's own files and ``scratch`` aside, is moved into the user's folder: merged folder by
      folder, never overwriting the user's newer data (a file the user changed meanwhile is kept, and the
      pane's copy is put beside it as ``<name>.polter-<pane>-<time>``); then the runtime dir is removed.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    folder: str = Field(
        description="Relative POSIX path of the moved folder inside the runtime dir (where the CLI's home variable "
        "points, e.g. 'codex' for $CODEX_HOME, 'gemini-cli/.gemini' under $GEMINI_CLI_HOME)."
    )
    user_folder: Path = Field(
        description="Absolute path of the same folder without Polter (e.g. ~/.codex, or $CODEX_HOME when the user "
        "set it)."
    )
    keep: tuple[str, ...] = Field(
        default=(),
        description="The CLI's persistent files and folders, relative to the folder; a folder ends with '/'. "
        "Conversations, prompt history, logins and tokens, logs, memory, trusted folders, the user's commands: "
        "linked to the user's own for the pane's life. An entry the CLI writes by replacing the file (write to a "
        "temporary file, then rename) replaces the link; that file is moved to the user's folder at the end.",
    )
    copied: tuple[str, ...] = Field(
        default=(),
        description="Kept files the CLI locks with a lock file beside the file a link points to (Gemini CLI's "
        "projects.json, locked as projects.json.lock next to the user's file): copied into the pane's folder when it "
        "starts instead of linked, so that the lock is taken there, and moved back when the pane ends as a replaced "
        "link is (a user's file changed meanwhile is never overwritten). Each must be a file entry of ``keep``.",
    )
    shared: tuple[str, ...] = Field(
        default=(),
        description="What the human's own CLI runs or trusts from the user's folder, outside Polter too (settings "
        "and hooks, extensions, plugins, commands, agents, skills, trusted folders, policies and rules approved "
        "'always', system prompts, .env): relative to the folder, a folder ending with '/', glob patterns allowed. "
        "A kept entry named here is linked so that the CLI sees it, but no pane may write it (read-only in the "
        "pane's sandbox whatever the role); and what a pane leaves under such a name is never moved into the "
        "user's folder: an agent could plant code there that runs in the human's own sessions.",
    )
    scratch: tuple[str, ...] = Field(
        default=(),
        description="Glob patterns (relative to the folder, matched per path) of what the CLI writes that nobody "
        "needs again (copies of its bundled files, lock files of the pane's own process): removed with the pane. "
        "Anything neither kept, scratch nor Polter's own is moved to the user's folder at the end.",
    )

    edited_configs: tuple[EditedConfig, ...] = Field(
        default=(),
        description="Polter's config files in the folder that the CLI writes the user's settings into (see "
        "EditedConfig): what it added there is added to the user's own file at the end.",
    )
    sqlite_path_records: tuple[str, ...] = Field(
        default=(),
        description="SQLite databases among the kept files in which the CLI records absolute paths of its own files "
        "(Codex's thread index records each conversation's file): when the pane ends, every text value naming a "
        "path under the pane's folder is rewritten to name the same path under the user's folder.",
    )

    @field_validator("folder")
    @classmethod
    def _folder_inside(cls, value: str) -> str:
        _relative_posix(value, "folder")
        return value.rstrip("/")

    @field_validator("user_folder")
    @classmethod
    def _user_folder_absolute(cls, value: Path) -> Path:
        if not value.is_absolute():
            raise ValueError("user_folder must be an absolute path")
        return value

    @field_validator("keep", "copied", "shared", "scratch", "sqlite_path_records")
    @classmethod
    def _entries_relative(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for name in value:
            _relative_posix(name.rstrip("/"), "entry")
        return value

    @model_validator(mode="after")
    def _copied_are_kept_files(self) -> StateHome:
        for name in self.copied:
            if name not in self.keep or name.endswith("/") or self.is_shared(name):
                raise ValueError(f"copied entry {name!r} must be a file entry of keep, not shared")
        return self

    def kept(self) -> dict[str, bool]:
        """Each kept entry (without its trailing '/') → whether it is a folder: what is linked."""
        return {name.rstrip("/"): name.endswith("/") for name in self.keep}

    def state(self) -> dict[str, bool]:
        """The kept entries that are the CLI's own state (not ``shared``): writable in the pane's sandbox."""
        return {name: is_folder for name, is_folder in self.kept().items() if not self.is_shared(name)}

    def is_shared(self, relative: str) -> bool:
        """Whether ``relative`` (a path in the folder) is, or lies in, what the human's CLI reads (``shared``)."""
        parts = PurePosixPath(relative).parts
        for pattern in self.shared:
            pattern_parts = PurePosixPath(pattern.rstrip("/")).parts
            if len(parts) >= len(pattern_parts) and all(
                fnmatch.fnmatchcase(part, wanted) for part, wanted in zip(parts, pattern_parts, strict=False)
            ):
                return True
        return False
