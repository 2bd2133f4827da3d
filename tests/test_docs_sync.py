"""The generated docs match the code: docs/cli.md is every command's --help, the
worked examples are kvplan's real output, and every technique and scenario key
has its documentation.

When a test here fails after a change to a command or its help, regenerate:

    python -m kvplan.docgen --write
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kvplan import docgen

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
REGENERATE = "out of date: run `python -m kvplan.docgen --write` and commit the result"


def test_cli_md_is_current():
    assert (DOCS / "cli.md").exists(), REGENERATE
    assert (DOCS / "cli.md").read_text(encoding="utf-8") == docgen.render_cli_docs(), f"docs/cli.md {REGENERATE}"


def test_cli_md_covers_every_command():
    import typer

    from kvplan.cli.app import app

    group = typer.main.get_command(app)
    text = (DOCS / "cli.md").read_text(encoding="utf-8")
    for name in group.commands:
        assert f"## kvplan {name}\n" in text, f"kvplan {name} missing from docs/cli.md: {REGENERATE}"
    for name in ("plan", "sweep", "compare"):
        assert f"Usage: kvplan {name} " in text


@pytest.mark.parametrize("page", docgen.example_pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_worked_examples_are_real_output(page):
    text = page.read_text(encoding="utf-8")
    assert docgen.refresh_examples(text) == text, f"{page.relative_to(ROOT)}: worked example {REGENERATE}"


def test_every_technique_has_a_page():
    from kvplan.techniques.registry import CATALOG

    for name, (syntax, term, _caveat, _line) in CATALOG.items():
        page = DOCS / "techniques" / f"{name}.md"
        assert page.exists(), f"docs/techniques/{name}.md is missing"
        text = page.read_text(encoding="utf-8")
        for section in ("## Formula", "## When it applies", "## Caveat", "## Worked example"):
            assert section in text, f"{page.name}: no {section!r}"
        assert "| kvplan |" in text and "| vLLM |" in text, f"{page.name}: flags table"
        assert f"-t {name}" in text, f"{page.name}: kvplan flag"
        example = re.search(r"<!-- example: (.+?) -->", text)
        assert example and f" -t {name}" in example.group(1), f"{page.name}: the worked example must use -t {name}"


def test_every_scenario_key_is_documented():
    from kvplan.workload.schema import SCHEMA

    text = (DOCS / "scenarios.md").read_text(encoding="utf-8")
    for key, field in SCHEMA.items():
        assert f"| `{key}` |" in text, f"docs/scenarios.md: key {key!r} undocumented"
        for child in field.children or {}:
            assert f"| `{key}.{child}` |" in text, f"docs/scenarios.md: key {key}.{child} undocumented"


def test_docgen_check_mode_agrees(monkeypatch):
    # main --check over docs/cli.md and one example page, fit.md (one of its examples exits non-zero): every page's
    # examples are rerun by test_worked_examples_are_real_output above, and rerunning them all here doubled the docs'
    # cost. The lines of kvplan/docgen.py this test runs are the same 81 as with every page.
    pages = docgen.example_pages()
    monkeypatch.setattr(docgen, "example_pages", lambda: [page for page in pages if page.name == "fit.md"])
    assert len(docgen.example_pages()) == 1 and docgen.main(["--check"]) == 0
