"""Finding skills on disk, the way the CLIs do: ``<root>/<name>/SKILL.md`` with YAML frontmatter."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from polter.adapters._contract import PaneFile, PaneToPrepare, Skill, SkillScope

__all__ = ["link_allowed_skills", "project_dirs", "read_skill", "scan_skills", "split_by_decision"]


def _frontmatter(text: str) -> dict[str, str]:
    """The simple ``key: value`` pairs of a SKILL.md's frontmatter (the only ones Polter needs)."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}
    fields: dict[str, str] = {}
    for line in lines[1:]:
        if line.strip() == "---":
            break
        key, sep, value = line.partition(":")
        if sep and key and not key.startswith((" ", "\t", "#")):
            value = value.strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
                value = value[1:-1]
            fields[key.strip()] = value
    return fields


def read_skill(skill_md: Path, scope: SkillScope, *, prefix: str = "", origin: str = "") -> Skill:
    """One skill from its SKILL.md; its name is the frontmatter ``name`` or else the folder's name."""
    try:
        fields = _frontmatter(skill_md.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        fields = {}
    name = fields.get("name") or skill_md.parent.name
    return Skill(
        name=f"{prefix}{name}",
        scope=scope,
        path=skill_md,
        description=fields.get("description", ""),
        origin=origin or str(skill_md.parent.parent),
    )


def scan_skills(root: Path, scope: SkillScope, *, prefix: str = "", origin: str = "") -> list[Skill]:
    """Every ``root/<name>/SKILL.md`` (hidden folders skipped), sorted by name."""
    if not root.is_dir():
        return []
    found = []
    for child in sorted(root.iterdir()):
        skill_md = child / "SKILL.md"
        if not child.name.startswith(".") and skill_md.is_file():
            found.append(read_skill(skill_md, scope, prefix=prefix, origin=origin or str(root)))
    return found


def project_dirs(cwd: Path, home: Path | None = None) -> list[Path]:
    """``cwd`` and its parents up to the enclosing git repository's root (or just ``cwd`` outside one).

    Stops below ``home`` so that the user's own ``~/.claude`` is never mistaken for a project's.
    """
    cwd = cwd.resolve()
    chain = [cwd, *cwd.parents]
    home = (home or Path.home()).resolve()
    for index, directory in enumerate(chain):
        if directory == home and index > 0:
            return chain[:index]
        if (directory / ".git").exists():
            return chain[: index + 1]
    return [cwd]


def split_by_decision(skills: Iterable[Skill], pane: PaneToPrepare) -> tuple[list[Skill], list[Skill]]:
    """(shown, hidden): a skill is hidden only when the role denies it; ``ask`` stays visible (the hook asks)."""
    shown: list[Skill] = []
    hidden: list[Skill] = []
    for skill in skills:
        (hidden if pane.decide_skill(skill.name) == "deny" else shown).append(skill)
    return shown, hidden


def link_allowed_skills(skills: Iterable[Skill], pane: PaneToPrepare, into: str) -> Iterator[tuple[str, PaneFile]]:
    """Runtime-dir symlinks ``into/<name>`` → each allowed skill's folder (for CLIs whose skill home Polter moves)."""
    seen: set[str] = set()
    for skill in skills:
        if skill.path is None or skill.name in seen or pane.decide_skill(skill.name) == "deny":
            continue
        seen.add(skill.name)
        yield f"{into}/{skill.path.parent.name}", PaneFile(link_to=skill.path.parent.resolve())
