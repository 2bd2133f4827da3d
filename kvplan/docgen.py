"""Generate docs/cli.md from every command's --help, and refresh the worked
examples in docs/techniques/*.md by running the commands they show.

    python -m kvplan.docgen --write     # rewrite docs/cli.md and the examples
    python -m kvplan.docgen --check     # exit 1 when either is out of date

Rerun `--write` whenever a command or its help changes (tests/test_docs_sync.py
fails until you do). An example is a block in a markdown page:

    <!-- example: kvplan estimate llama-3.1-70b --context 128k -t fp8 -->
    ```text
    (the command's output, replaced on --write)
    ```
    <!-- /example -->
"""

from __future__ import annotations

import argparse
import io
import re
import shlex
import sys
from pathlib import Path

WIDTH = 100  # help text wrap width, fixed so the file does not depend on the terminal
ROOT = Path(__file__).resolve().parent.parent
CLI_DOC = ROOT / "docs" / "cli.md"
EXAMPLE_DOCS = ("docs/techniques/*.md", "docs/reading-the-numbers.md", "docs/scenarios.md", "docs/models.md",
                "docs/fit.md", "docs/sglang.md")
EXAMPLE_RE = re.compile(r"(<!-- example: (?P<cmd>.+?) -->\n)(?P<body>.*?)(<!-- /example -->)", re.S)


def _help(command, name: str, parent=None) -> str:
    import click

    settings = {k: v for k, v in (command.context_settings or {}).items() if k == "help_option_names"}  # -h, --help
    ctx = click.Context(command, info_name=name, parent=parent, terminal_width=WIDTH, max_content_width=WIDTH, **settings)
    return command.get_help(ctx).rstrip()


def render_cli_docs() -> str:
    """Markdown for every command of `kvplan`, in the order the app registers them."""
    import click
    import typer

    from .cli.app import app

    group = typer.main.get_command(app)
    root = click.Context(group, info_name="kvplan", terminal_width=WIDTH, max_content_width=WIDTH,
                         help_option_names=(group.context_settings or {}).get("help_option_names", ["--help"]))
    out = [
        "# kvplan command reference",
        "",
        "Generated from each command's `--help` by `python -m kvplan.docgen --write`; do not edit by hand.",
        "tests/test_docs_sync.py fails when this file and the commands disagree.",
        "",
        "## kvplan",
        "",
        "```text",
        _help(group, "kvplan"),
        "```",
        "",
    ]
    for name in group.list_commands(root):
        command = group.get_command(root, name)
        if command is None or getattr(command, "hidden", False):
            continue
        out += [f"## kvplan {name}", "", "```text", _help(command, name, root), "```", ""]
    out += ENVIRONMENT
    return "\n".join(out)


DOC_COLUMNS = 120


ENVIRONMENT = [
    "## Environment",
    "",
    "| variable | effect |",
    "|---|---|",
    "| `KVPLAN_HUB_TIMEOUT` | seconds a Hub lookup of a config.json may take in all, DNS, connect and "
    "download included (default 30; connect and each read also time out after 10 s); no retries |",
    "| `HF_TOKEN` | the Hub token (else the one `hf auth login` stored); sent only to the Hub's host, never printed |",
    "| `HF_HUB_OFFLINE` | `1`: read Hub configs only from the local Hugging Face cache |",
    "| `HF_ENDPOINT` | another Hub address (a mirror) |",
    "| `KVPLAN_DEBUG` | `1`: a traceback instead of the one-line internal-error message |",
    "",
]


def run_cli(argv: list[str], columns: int = DOC_COLUMNS) -> tuple[int, str]:
    """Run `kvplan ARGS` in-process at a terminal `columns` wide; (exit code, stdout + stderr)."""
    from .cli import common
    from .cli.app import app

    import os

    buf = io.StringIO()
    old = sys.argv, sys.stdout, sys.stderr
    old_columns = os.environ.get("COLUMNS")
    # the documented examples print at a fixed width (120 columns), whatever the terminal
    os.environ["COLUMNS"] = str(columns)
    sys.argv, sys.stdout, sys.stderr = ["kvplan", *argv], buf, buf
    try:
        code = common.run(app)
    finally:
        sys.argv, sys.stdout, sys.stderr = old
        if old_columns is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old_columns
    return code, buf.getvalue()


def refresh_examples(text: str) -> str:
    """The page with every example block's output replaced by a fresh run."""

    def one(match: re.Match) -> str:
        argv = shlex.split(match.group("cmd"))
        if argv[:1] != ["kvplan"]:
            raise SystemExit(f"docgen: example must start with 'kvplan': {match.group('cmd')}")
        code, output = run_cli(argv[1:])
        lines = [line.rstrip() for line in output.rstrip("\n").splitlines()]
        if code:
            lines.append(f"(exit code {code})")
        body = "```text\n" + "\n".join(lines) + "\n```\n"
        return match.group(1) + body + match.group(4)

    return EXAMPLE_RE.sub(one, text)


def example_pages() -> list[Path]:
    pages = []
    for pattern in EXAMPLE_DOCS:
        pages += sorted(ROOT.glob(pattern))
    return pages


def stale() -> list[Path]:
    """The generated files whose content differs from a fresh render."""
    out = []
    if not CLI_DOC.exists() or CLI_DOC.read_text(encoding="utf-8") != render_cli_docs():
        out.append(CLI_DOC)
    for page in example_pages():
        text = page.read_text(encoding="utf-8")
        if refresh_examples(text) != text:
            out.append(page)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kvplan.docgen", description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="rewrite docs/cli.md and the examples in place")
    mode.add_argument("--check", action="store_true", help="exit 1 when a generated file is out of date")
    args = parser.parse_args(argv)
    if args.check:
        bad = stale()
        for path in bad:
            print(f"out of date: {path.relative_to(ROOT)} (run python -m kvplan.docgen --write)")
        return 1 if bad else 0
    if args.write:
        CLI_DOC.parent.mkdir(parents=True, exist_ok=True)
        CLI_DOC.write_text(render_cli_docs(), encoding="utf-8")
        for page in example_pages():
            text = page.read_text(encoding="utf-8")
            fresh = refresh_examples(text)
            if fresh != text:
                page.write_text(fresh, encoding="utf-8")
                print(f"updated {page.relative_to(ROOT)}")
        print(f"wrote {CLI_DOC.relative_to(ROOT)}")
        return 0
    sys.stdout.write(render_cli_docs())
    return 0


if __name__ == "__main__":
    sys.exit(main())
