"""The `kvplan` command: a table of commands, each built only when it runs.

typer turns every registered function into a click command (inspecting its
signature) when the app starts; with every command registered that is most of
the cold start. `main()` therefore registers only the command named on the
command line; `kvplan --help`, an unknown name and shell completion get all of
them. Adding a command is one line in COMMANDS. No arithmetic here.
"""

from __future__ import annotations

import os
import sys

# name -> (module under kvplan.cli, function), in the order `kvplan --help` lists them
COMMANDS: dict[str, tuple[str, str]] = {
    "estimate": ("estimate", "estimate_command"),
    "models": ("models", "models_command"),
    "techniques": ("models", "techniques_command"),
    "gpus": ("models", "gpus_command"),
    "bench": ("bench", "bench_command"),
    "gate": ("gate", "gate_command"),
    "plan": ("plan", "plan_command"),
    "sweep": ("sweep", "sweep_command"),
    "compare": ("compare", "compare_command"),
    "fit": ("fit", "fit_command"),
    "weights": ("weights", "weights_command"),
    "calibrate": ("calibrate", "calibrate_command"),
}

HELP = "Plan and validate the KV cache of LLM serving."
CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"]}  # -h on every command (children inherit it)


def _version(value: bool) -> None:
    if value:
        import typer

        from .. import __version__

        print(f"kvplan {__version__}")
        raise typer.Exit()


def build_app(names=None):
    """A typer app holding the commands `names` (all of them when None)."""
    import importlib

    import typer

    app = typer.Typer(
        name="kvplan",
        help=HELP,
        no_args_is_help=True,
        add_completion=True,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        context_settings=CONTEXT_SETTINGS,
    )

    @app.callback()
    def _root(
        version: bool = typer.Option(False, "--version", help="Print the version and exit.", callback=_version, is_eager=True),
    ) -> None:
        """Plan and validate the KV cache of LLM serving."""

    from .common import command_class

    cls = command_class()  # an option given as '' is refused, never taken for the option left out
    for name in COMMANDS if names is None else names:
        module, function = COMMANDS[name]
        app.command(name, cls=cls)(getattr(importlib.import_module(f"{__package__}.{module}"), function))
    return app


def commands_needed(argv: list[str]) -> list[str] | None:
    """The commands an argument list needs built: the one it names; none for root
    options alone (--version, --show-completion); all (None) for no arguments,
    a help request or an unknown name. The root options take no values, so the
    first word that is not an option is the command."""
    for arg in argv:
        if arg == "--":
            break
        if not arg.startswith("-"):
            return [arg] if arg in COMMANDS else None
    if not argv or any(arg in CONTEXT_SETTINGS["help_option_names"] for arg in argv):
        return None
    return []


def __getattr__(name: str):
    """`from kvplan.cli.app import app`: the full app, built on first use (tests, docs)."""
    if name == "app":
        app = build_app()
        globals()["app"] = app
        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    if sys.argv[1:] == ["--version"]:  # answered before typer loads
        from .. import __version__

        print(f"kvplan {__version__}")
        sys.exit(0)
    from .common import run

    completing = "_KVPLAN_COMPLETE" in os.environ  # the shell asks for completions: it needs every command
    sys.exit(run(build_app(None if completing else commands_needed(sys.argv[1:]))))
