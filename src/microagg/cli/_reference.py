"""The command-line reference (``docs/cli.md``), generated from the typer app itself.

``python -m microagg.cli._reference > docs/cli.md`` (or ``make docs-cli``) rewrites it; a
test fails when the committed page and the app disagree, so the reference cannot go stale.
"""

from __future__ import annotations

from typing import Any

import typer

from microagg.cli import app

__all__ = ["render_reference"]


def _cell(text: str) -> str:
    """Help text as one Markdown table cell (rich markup escapes, ``\\[``, undone)."""
    return " ".join(text.split()).replace("\\[", "[").replace("|", "\\|")


# typer may bring its own copy of click (typer._click): the objects are used by their
# attributes only, never by isinstance against an imported click


def _row(param: Any, ctx: Any) -> str:
    """One table row from the same help record ``--help`` prints: names and type, help."""
    record = param.get_help_record(ctx)
    names, help_text = (record if record is not None else (param.name or "", ""))
    return f"| `{_cell(names)}` | {_cell(help_text)} |"


def _command_section(name: str, command: Any, parent: Any) -> list[str]:
    ctx = command.context_class(command, info_name=name, parent=parent)
    level = "###" if " " in name else "##"
    lines = [f"{level} `microagg {name}`", "", _cell(command.help or ""), "", "```",
             f"microagg {name} " + " ".join(command.collect_usage_pieces(ctx)), "```", ""]
    params = command.get_params(ctx)
    arguments = [p for p in params if p.param_type_name == "argument"]
    options = [p for p in params if p.param_type_name == "option" and p.name != "help"]
    for title, rows in (("argument", arguments), ("option", options)):
        if rows:
            lines += [f"| {title} | help |", "| --- | --- |"]
            lines += [_row(p, ctx) for p in rows]
            lines.append("")
    return lines


def render_reference() -> str:
    """The Markdown reference of every ``microagg`` command, in the order of ``--help``."""
    group: Any = typer.main.get_command(app)
    root = group.context_class(group, info_name="microagg")
    lines = ["# Command-line reference", "",
             "Generated from the app by `make docs-cli` (`python -m microagg.cli._reference`, "
             f"typer {typer.__version__}); do not edit by hand. `microagg COMMAND --help` "
             "prints the same.", "",
             _cell(group.help or ""), ""]
    lines += [f"- [`microagg {name}`](#microagg-{name}): "
              f"{_cell(group.commands[name].get_short_help_str(limit=200))}"
              for name in group.list_commands(root)]
    lines.append("")
    for name in group.list_commands(root):
        command = group.commands[name]
        sub = getattr(command, "commands", None)
        if sub:  # a command group (microagg graph ...): one section per subcommand
            ctx = command.context_class(command, info_name=name, parent=root)
            lines += [f"## `microagg {name}`", "", _cell(command.help or ""), ""]
            for child in command.list_commands(ctx):
                lines += _command_section(f"{name} {child}", sub[child], ctx)
            continue
        lines += _command_section(name, command, root)
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":  # pragma: no cover - exercised by make docs-cli
    print(render_reference(), end="")
