"""One contract for every command: each option described in plain text, --json wherever a result is
reported, and one exit-status table that the README, `mqspec --help` and each command's --help show."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from mqspec.cli import exits
from mqspec.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
#: Sphinx markup a terminal would show as it is
RST = re.compile(r"``|:(?:class|mod|func|meth|attr|data|exc|obj|doc|ref):`")
#: commands whose output is JSON (or documentation) whatever the options, so a --json flag would change nothing
NO_JSON = {
    "encode": "prints the encoded bytes as hexadecimal text (the input of decode --hex)",
    "trace schema": "prints a JSON Schema",
    "scenario vocabulary": "prints the scenario language, which is documentation",
}


def commands(group: click.Group = main, prefix: str = "") -> list[tuple[str, click.Command]]:
    """Every command a user can run, as typed after `mqspec`."""
    found = []
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            found += commands(command, f"{prefix}{name} ")
        else:
            found.append((f"{prefix}{name}", command))
    return found


COMMANDS = [name for name, _ in commands()]


def help_text(name: str) -> str:
    result = CliRunner().invoke(main, [*name.split(), "--help"], terminal_width=100)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("name", COMMANDS)
def test_every_option_is_described_in_plain_text(name):
    """Each option of each command has a help line, and the help shows no Sphinx markup (``x``, :class:`X`)."""
    command = dict(commands())[name]
    bare = [p.opts for p in command.params if isinstance(p, click.Option) and not p.help]
    assert bare == [], f"mqspec {name}: options without help"
    text = help_text(name)
    assert not RST.search(text), f"mqspec {name} --help: {RST.search(text).group(0)!r}"


def test_group_help_and_the_scenario_language_are_plain_text():
    """The groups' help and `scenario vocabulary` (written for Sphinx too) print no Sphinx markup."""
    for args in ([], ["mqsd"], ["pipeline"], ["scenario"], ["trace"]):
        assert not RST.search(CliRunner().invoke(main, [*args, "--help"]).output), args
    vocabulary = CliRunner().invoke(main, ["scenario", "vocabulary"]).output
    assert "ScenarioError" in vocabulary and "`steps`" in vocabulary and not RST.search(vocabulary)


@pytest.mark.parametrize("name", COMMANDS)
def test_json_is_offered_wherever_a_result_is_reported(name):
    """Every command has --json, unless its output is JSON (or documentation) whatever the options."""
    has = any(isinstance(p, click.Option) and "--json" in p.opts for p in dict(commands())[name].params)
    assert has != (name in NO_JSON), f"mqspec {name}: --json {'present' if has else 'missing'}"


def test_every_command_has_a_row_of_the_exit_table_and_its_help_ends_with_it():
    """The table names exactly the commands there are; each one's --help ends with its row, whole."""
    assert sorted(exits.BY_COMMAND) == sorted(COMMANDS)
    for name in COMMANDS:
        assert set(exits.BY_COMMAND[name]) <= set(exits.CODES) and 0 in exits.BY_COMMAND[name]
        assert " ".join(exits.row(name).split()) in " ".join(help_text(name).split()), name


def test_the_main_help_and_the_readme_show_the_same_table():
    """`mqspec --help` lists what each status means; the README holds the table as exits.markdown() writes it."""
    text = " ".join(CliRunner().invoke(main, ["--help"]).output.split())
    for code, meaning in exits.MEANING.items():
        assert f"{code} {meaning}" in text
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert exits.markdown() in readme
    for code, meaning in exits.MEANING.items():
        assert f"| {code} | {meaning} |" in readme
