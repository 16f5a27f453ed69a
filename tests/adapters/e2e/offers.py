"""What a CLI offered the model, read from the request the fake model received."""

from __future__ import annotations

import re

from support.fake_models import ModelRequest

_SECTIONS = [
    # Claude Code: "The following skills are available for use with the Skill tool:" then "- name: description".
    (r"skills are available for use with the Skill tool:\n\n(.*?)(?:\n\n(?!- )|$)", r"^- ([\w:.-]+):"),
    # Codex: <skills_instructions> … "- name: description (file: …)" … </skills_instructions>.
    (r"<skills_instructions>(.*?)</skills_instructions>", r"^- ([\w:.-]+): "),
    # Gemini CLI, Qwen Code and opencode: <available_skills><skill><name>…</name>…
    (r"<available_skills>(.*?)</available_skills>", r"<name>\s*([^<]+?)\s*</name>"),
]


def offered_skills(request: ModelRequest) -> set[str]:
    """The skills the CLI listed to the model in this request (empty when it listed none)."""
    flat = "\n".join(strings(request.body))
    names: set[str] = set()
    for section, item in _SECTIONS:
        for match in re.finditer(section, flat, re.S):
            names |= set(re.findall(item, match.group(1), re.M))
    return names


def strings(value: object) -> list[str]:
    """Every string inside a parsed JSON body."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in strings(item)]
    return []
