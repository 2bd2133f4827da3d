"""The one renderer: every command builds a Report; this prints it as a table,
JSON, CSV or Markdown. Data goes to stdout, diagnostics to stderr.

rich is imported only to draw a terminal table: JSON, CSV and Markdown never load it.
"""

from __future__ import annotations

import io
import json
import sys
from dataclasses import field
from fractions import Fraction
from typing import Any

from ._record import record

FORMATS = ("table", "json", "csv", "markdown")


@record(frozen=False)
class Table:
    title: str
    columns: list[str]
    rows: list[list[Any]]
    # columns whose text aligns right in the terminal table
    numeric: set[int] = field(default_factory=set)


@record(frozen=False)
class Report:
    data: dict  # the JSON document: stable, documented keys
    tables: list[Table] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)  # plain lines shown under the tables
    headline: str = ""
    # documents too large to hold as rows (a sweep of a million points): format ->
    # a function writing the whole document to a stream, in pieces
    streams: dict = field(default_factory=dict)


def _json_default(value):
    if isinstance(value, Fraction):
        return int(value) if value.denominator == 1 else float(value)
    if hasattr(value, "__dict__"):
        return vars(value)
    raise TypeError(f"cannot encode {type(value).__name__}")


def to_json(data: dict) -> str:
    return json.dumps(data, indent=2, default=_json_default)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, Fraction):
        value = int(value) if value.denominator == 1 else float(value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.2f}"
    return str(value)


def _markdown(report: Report) -> str:
    out = []
    if report.headline:
        out.append(f"**{report.headline}**\n")
    for table in report.tables:
        out.append(f"### {table.title}\n")
        out.append("| " + " | ".join(table.columns) + " |")
        out.append("|" + "|".join("---:" if i in table.numeric else "---" for i in range(len(table.columns))) + "|")
        for row in table.rows:
            out.append("| " + " | ".join(_cell(v).replace("|", "\\|") for v in row) + " |")
        out.append("")
    out.extend(f"- {line}" for line in report.lines)
    return "\n".join(out).rstrip() + "\n"


def _csv(report: Report) -> str:
    import csv

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    for i, table in enumerate(report.tables):
        if i:
            buf.write("\n")
        writer.writerow(table.columns)
        for row in table.rows:
            writer.writerow(["" if v is None else (float(v) if isinstance(v, Fraction) else v) for v in row])
    return buf.getvalue()


def _rich(report: Report, stream) -> None:
    from rich.console import Console
    from rich.table import Table as RichTable

    console = Console(file=stream, highlight=False, soft_wrap=False, width=max(120, 0))
    if report.headline:
        console.print(report.headline, markup=False)
    for table in report.tables:
        rt = RichTable(title=table.title, title_justify="left")
        for i, col in enumerate(table.columns):
            rt.add_column(col, justify="right" if i in table.numeric else "left")
        for row in table.rows:
            rt.add_row(*[_cell(v) for v in row])
        console.print(rt)
    for line in report.lines:  # plain lines: never wrapped, so they stay greppable
        stream.write(line + "\n")


def render(report: Report, fmt: str = "table", stream=None) -> None:
    stream = stream or sys.stdout
    if fmt in report.streams:
        report.streams[fmt](stream)
    elif fmt == "json":
        stream.write(to_json(report.data) + "\n")
    elif fmt == "csv":
        stream.write(_csv(report))
    elif fmt == "markdown":
        stream.write(_markdown(report))
    else:
        _rich(report, stream)
