"""Every kind of bad role file is reported with file, line and field, exactly; the others still load."""

from __future__ import annotations

from pathlib import Path

import pytest

from polter.roles.library import RoleLibrary
from polter.roles.loader import read_role_file

from .conftest import RoleDir

BAD_FILES = {
    "syntax": (
        'description = "x"\n[tools]\ndefault = "allow"\ndeny = ["a/b",\n',
        "roles/syntax.toml:4: invalid TOML: Invalid value",
    ),
    "column": (
        'description = "x"\n[tools]\ndefault = allow\n',
        "roles/column.toml:3: invalid TOML: Invalid value (column 11)",
    ),
    "twice": (
        'description = "x"\n\ndescription = "y"\n',
        "roles/twice.toml:3: invalid TOML: Cannot overwrite a value (column 18)",
    ),
    "unknown-key": (
        'description = "x"\n\n[tools]\ndefault = "allow"\ndenny = ["a/b"]\n',
        "roles/unknown-key.toml:5: tools.denny: unknown key (known: default, allow, ask, deny)",
    ),
    "unknown-top-key": (
        'descripton = "x"\n',
        "roles/unknown-top-key.toml:1: descripton: unknown key "
        "(known: name, description, extends, servers, tools, skills, sampling, elicitation, builtins, gates, phases, sandbox, team)",
    ),
    "dotted-key": (
        'tools.default = "allow"\ntools.allows = ["a/*"]\n',
        "roles/dotted-key.toml:2: tools.allows: unknown key (known: default, allow, ask, deny)",
    ),
    "bad-pattern": (
        '[tools]\ndefault = "allow"\ndeny = [\n  "a/b",\n  "github",\n]\n',
        "roles/bad-pattern.toml:5: tools.deny: 'github': a tool pattern is server/tool (write \"github/*\" for every tool of it)",
    ),
    "bad-glob": (
        '[tools]\ndefault = "allow"\nask = ["gh/get_?"]\n',
        "roles/bad-glob.toml:3: tools.ask: 'gh/get_?': only * is a wildcard (? is not supported)",
    ),
    "bad-selector": (
        '[tools]\ndefault = "allow"\nask = ["@dangerous"]\n',
        "roles/bad-selector.toml:3: tools.ask: '@dangerous': unknown selector '@dangerous' (known: @read-only, @destructive)",
    ),
    "server-with-slash": (
        '[servers]\ndefault = "allow"\ndeny = ["github/*"]\n',
        "roles/server-with-slash.toml:3: servers.deny: 'github/*': a server pattern names a server, "
        "without '/' (tool patterns go in tools.*)",
    ),
    "bad-decision": (
        '[servers]\ndefault = "alow"\n',
        "roles/bad-decision.toml:2: servers.default: must be 'allow', 'ask' or 'deny', not 'alow'",
    ),
    "not-a-string": (
        '[tools]\ndefault = "allow"\ndeny = ["a/b", 3]\n',
        "roles/not-a-string.toml:3: tools.deny: must be a string, not 3",
    ),
    "not-a-bool": (
        '[phases]\nenabled = "yes"\n',
        "roles/not-a-bool.toml:2: phases.enabled: must be true or false, not 'yes'",
    ),
    "not-a-list": (
        '[phases]\nresearch = "@read-only"\n',
        "roles/not-a-list.toml:2: phases.research: must be a list, not '@read-only'",
    ),
    "no-default": (
        '# a whitelist attempt\n[tools]\nallow = ["a/*"]\n',
        "roles/no-default.toml:2: tools.default: missing: say allow, ask or deny; whatever the role does not name "
        "follows it (a role cannot be a pure whitelist)",
    ),
    "two-lists": (
        '[tools]\ndefault = "ask"\nallow = ["a/*"]\ndeny = [\n  "b/*",\n  "a/*",\n]\n',
        'roles/two-lists.toml:6: tools.deny: "a/*" is also in tools.allow; a pattern belongs in one list',
    ),
    "empty-gate": ('[gates]\n"a/b" = []\n', 'roles/empty-gate.toml:2: gates."a/b": must not be empty'),
    "blank-keyword": (
        '[gates]\n"a/b" = ["ok", " "]\n',
        'roles/blank-keyword.toml:2: gates."a/b": a keyword cannot be blank',
    ),
    "bad-gate-pattern": (
        '\n[gates]\nkick = ["kick"]\n',
        "roles/bad-gate-pattern.toml:3: gates.kick: 'kick': a tool pattern is server/tool (write \"kick/*\" for every tool of it)",
    ),
    "wrong-name": (
        'name = "other"\n',
        "roles/wrong-name.toml:1: name: 'other' differs from the file's name: a role is named after its file ('wrong-name')",
    ),
    "bad-extends-name": (
        'extends = "no good"\n',
        "roles/bad-extends-name.toml:1: extends: 'no good' is not a role name (letters, digits, '.', '_' and '-', starting with a letter or digit)",
    ),
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_each_problem_is_reported_with_file_line_field_and_message(role_dir: RoleDir, name: str) -> None:
    text, expected = BAD_FILES[name]
    role_dir.write(name, text)
    role_dir.write("good", 'description = "fine"\n')
    library = RoleLibrary.load([Path("roles")])
    assert [str(problem) for problem in library.problems] == [expected]
    assert library.names() == ["good"]


def test_all_problems_of_a_file_are_reported_not_just_the_first(role_dir: RoleDir) -> None:
    path = role_dir.write("many", '[tools]\ndefault = "alow"\ndeny = ["x"]\nbogus = 1\n')
    assert [str(problem) for problem in read_role_file(Path("roles/many.toml")).problems] == [
        "roles/many.toml:2: tools.default: must be 'allow', 'ask' or 'deny', not 'alow'",
        "roles/many.toml:3: tools.deny: 'x': a tool pattern is server/tool (write \"x/*\" for every tool of it)",
        "roles/many.toml:4: tools.bogus: unknown key (known: default, allow, ask, deny)",
    ]
    assert path.exists()


def test_unknown_extends_names_the_known_roles(role_dir: RoleDir) -> None:
    role_dir.write("base", "")
    role_dir.write("child", '# child\n\nextends = "nope"\n')
    library = RoleLibrary.load([Path("roles")])
    assert [str(p) for p in library.problems] == [
        "roles/child.toml:3: extends: unknown role 'nope' (known: base, child)"
    ]


def test_an_inheritance_cycle_is_reported_on_every_role_in_it_and_others_load(role_dir: RoleDir) -> None:
    role_dir.write("a", 'extends = "b"\n')
    role_dir.write("b", '# b\nextends = "c"\n')
    role_dir.write("c", 'extends = "a"\n')
    role_dir.write("d", 'extends = "a"\n')
    role_dir.write("e", "")
    library = RoleLibrary.load([Path("roles")])
    assert [str(p) for p in library.problems] == [
        "roles/a.toml:1: extends: inheritance cycle: a → b → c → a",
        "roles/b.toml:2: extends: inheritance cycle: b → c → a → b",
        "roles/c.toml:1: extends: inheritance cycle: c → a → b → c",
        "roles/d.toml:1: extends: the role 'a' it extends has problems (see roles/a.toml)",
    ]
    assert library.names() == ["e"]


def test_a_role_extending_itself_without_an_earlier_layer_is_an_error(role_dir: RoleDir) -> None:
    role_dir.write("me", 'extends = "me"\n')
    assert [str(p) for p in RoleLibrary.load([Path("roles")]).problems] == [
        "roles/me.toml:1: extends: 'me' extends itself, and no earlier layer has a role 'me' to extend"
    ]


def test_a_file_named_badly_is_reported(role_dir: RoleDir) -> None:
    (role_dir.path / "my role.toml").write_text("")
    assert [str(p) for p in RoleLibrary.load([Path("roles")]).problems] == [
        "roles/my role.toml: 'my role' is not a role name: name the file with letters, digits, '.', '_' and '-'"
    ]


def test_a_file_that_is_not_utf8_is_reported(role_dir: RoleDir) -> None:
    (role_dir.path / "latin.toml").write_bytes(b'description = "caf\xe9"\n')
    assert [str(p) for p in RoleLibrary.load([Path("roles")]).problems] == [
        "roles/latin.toml: not UTF-8 text (byte 18)"
    ]


def test_a_deny_on_a_floor_tool_is_a_warning_with_its_line(role_dir: RoleDir) -> None:
    role_dir.write("floor", '[tools]\ndefault = "allow"\ndeny = ["polter/whoami"]\n')
    library = RoleLibrary.load([Path("roles")])
    assert library.problems == [] and library.names() == ["floor"]
    assert [str(w) for w in library.warnings] == [
        'roles/floor.toml:3: tools.deny: "polter/whoami" is ignored for polter/*: Polter\'s floor tools are always allowed'
    ]


def test_lines_are_found_in_inline_tables_and_multiline_strings(role_dir: RoleDir) -> None:
    role_dir.write("inline", 'description = """\nx = 1\n"""\ntools = { default = "allow", deny = ["bad"] }\n')
    assert [str(p) for p in RoleLibrary.load([Path("roles")]).problems] == [
        "roles/inline.toml:4: tools.deny: 'bad': a tool pattern is server/tool (write \"bad/*\" for every tool of it)"
    ]


def test_toml_syntax_errors_of_any_file_name_their_line() -> None:
    """The public reader the servers file and the app's config use too."""
    import tomllib

    from polter.roles.loader import toml_syntax_error

    for text, expected in [
        ("[a]\nx = 1\n[b\n", "any.toml:3: invalid TOML: Expected ']' at the end of a table declaration (column 3)"),
        ("x = 1\ny = 2\nx = 3\n", "any.toml:3: invalid TOML: Cannot overwrite a value (column 6)"),
    ]:
        with pytest.raises(tomllib.TOMLDecodeError) as caught:
            tomllib.loads(text)
        assert str(toml_syntax_error(Path("any.toml"), text, caught.value)) == expected
