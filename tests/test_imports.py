"""docs/architecture.md's table of which package may import which is true of the code: every module of polter/
and plugins/ belongs to a row, each of its imports (at module level, for the type checker, or inside a
function) stays in its row or names a module the row may import; and an import inside a function says
why it is there (``# lazy: ...``, with the measured reason in docs/architecture.md), except where a package's
own docstring states its rule (the command line) or the work is left for later, named below with the reason."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCUMENT = ROOT / "docs" / "architecture.md"
SECTION = "## Packages and the way imports run"

LAZY_BY_RULE = ("polter.cli",)
"""Packages whose own docstring states why their imports sit inside functions (the command line: every
command's module is imported for ``--help``, so a module-level import is paid by every command)."""
LAZY_LEFT = {
    "polter.worktrees._models": "the worktree record's methods call the modules that build and read records "
    "(undoing it changes the package's API: status(worktree) instead of worktree.status())",
}
"""Function-level imports left as they are for now, and why."""


@dataclass(frozen=True)
class Row:
    covers: tuple[str, ...]
    may_import: tuple[str, ...]
    anything: bool


def rows() -> list[Row]:
    text = DOCUMENT.read_text(encoding="utf-8")
    assert SECTION in text, f"{DOCUMENT} has no section {SECTION!r}"
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    found = []
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 3 or cells[0] in ("package", "") or set(cells[0]) <= {"-", ":"}:
            continue
        covers = tuple(name.rstrip("/").replace("/", ".") for name in re.findall(r"`([\w./]+)`", cells[0]))
        may = tuple(re.findall(r"`([\w.]+)`", cells[2]))
        found.append(Row(covers, may, anything=cells[2].startswith("anything")))
    assert found, f"the table of {SECTION!r} in {DOCUMENT} has no rows"
    return found


def module_names() -> dict[str, Path]:
    modules = {}
    for path in [*ROOT.glob("polter/**/*.py"), *ROOT.glob("plugins/*.py")]:
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = path
    return modules


def within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def row_of(name: str, table: list[Row]) -> Row | None:
    matches = [(len(cover), row) for row in table for cover in row.covers if within(name, cover)]
    return max(matches, key=lambda match: match[0])[1] if matches else None


@dataclass(frozen=True)
class Import:
    target: str
    line: int
    in_function: bool
    commented: bool


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> list[Import]:
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[Import] = []

    def commented(node: ast.stmt) -> bool:
        """``# lazy:`` on the import's line, or on the line above the imports it starts with."""
        if "# lazy:" in lines[node.lineno - 1]:
            return True
        number = node.lineno - 2
        while number >= 0 and lines[number].strip().startswith(("import ", "from ")):
            number -= 1
        return number >= 0 and lines[number].strip().startswith("# lazy:")

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.Import):
                for alias in child.names:
                    found.append(Import(alias.name, child.lineno, in_function, commented(child)))
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    base = ".".join([*package.split(".")[: len(package.split(".")) - child.level + 1], base]).strip(".")
                for alias in child.names:
                    full = f"{base}.{alias.name}"
                    target = full if full in modules else base
                    found.append(Import(target, child.lineno, in_function, commented(child)))
            visit(child, inner)

    visit(ast.parse(source), False)
    return [item for item in found if item.target.split(".")[0] in ("polter", "plugins") or item.in_function]


def test_every_module_is_in_the_table_and_imports_only_what_its_row_may() -> None:
    table, modules = rows(), module_names()
    uncovered = [name for name in modules if row_of(name, table) is None]
    assert not uncovered, f"modules no row of {DOCUMENT.name}'s table covers: {uncovered}"
    wrong = []
    for name, path in sorted(modules.items()):
        row = row_of(name, table)
        assert row is not None
        for item in imports_of(name, path, modules):
            target = item.target
            if target.split(".")[0] not in ("polter", "plugins") or row.anything:
                continue
            if row_of(target, table) is row or any(within(target, allowed) for allowed in row.may_import):
                continue
            wrong.append(f"{path.relative_to(ROOT)}:{item.line}: {name} imports {target}")
    assert not wrong, f"imports {DOCUMENT.name}'s table does not allow:\n" + "\n".join(wrong)


def test_an_import_inside_a_function_says_why() -> None:
    modules = module_names()
    silent = [
        f"{path.relative_to(ROOT)}:{item.line}: {item.target}"
        for name, path in sorted(modules.items())
        if not any(within(name, rule) for rule in (*LAZY_BY_RULE, *LAZY_LEFT))
        for item in imports_of(name, path, modules)
        if item.in_function and not item.commented
    ]
    assert not silent, "imports inside functions with no `# lazy: why` (measured in docs/architecture.md):\n" + (
        "\n".join(silent)
    )


def test_the_rule_and_what_is_left_are_stated_where_they_apply() -> None:
    import polter.cli

    assert "inside" in (polter.cli.__doc__ or "") and "measured" in (polter.cli.__doc__ or "")
    modules = module_names()
    assert all(any(within(name, left) for name in modules) for left in LAZY_LEFT), "a left item no longer exists"
