"""The one renderer: every command builds a Report; this prints it as a table,
JSON, CSV, NDJSON or Markdown. Data goes to stdout, diagnostics to stderr.

rich is imported only to draw a terminal table: JSON, CSV and Markdown never load it.

Terminal tables follow the terminal: rich's own width detection (a terminal's
size, else $COLUMNS, else 80 columns), and cells fold onto more lines instead of
being cut, so technique specs, HF ids and flags always print whole; a table wider
than the terminal breaks its cells between words, never inside a number.

CSV and NDJSON print the report's one tidy table (`Report.tidy`): one header,
one row per observation, raw integers and plain numbers (bytes, tokens, ms),
never the human strings of the terminal tables. docs/json.md lists the columns.
"""

from __future__ import annotations

import io
import json
import sys
from dataclasses import field
from fractions import Fraction
from typing import Any

from ._record import record

# the widest a column is kept for one word on a narrow terminal (longer words fold)
WORD_WIDTH_MAX = 16
# a cell this short is kept on one line ("0 B", "40.00 GiB")
SHORT_CELL = 10

FORMATS = ("table", "json", "csv", "ndjson", "markdown")


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
    # the one machine table (--format csv / ndjson): raw values, stable column names;
    # None = the only table, when a report has exactly one and its cells are raw
    tidy: Table | None = None


def note_line(text: str, indent: str = "  ") -> str:
    """A plain line under a report section: "note: ..." unless the text is a warning already ("warning: ...",
    which then prints as it is, not as "note: warning: ...")."""
    return f"{indent}{text}" if text.startswith("warning: ") else f"{indent}note: {text}"


def _json_default(value):
    if isinstance(value, Fraction):
        return int(value) if value.denominator == 1 else float(value)
    if hasattr(value, "__dict__"):
        return vars(value)
    raise TypeError(f"cannot encode {type(value).__name__}")


def to_json(data: dict) -> str:
    return json.dumps(data, indent=2, default=_json_default)


# control characters (C0 but tab and newline, DEL, C1): text from a user's file (a scenario's name) must not
# reach the terminal raw, where an escape sequence could repaint or rewrite it
_CONTROL = {c: f"\\x{c:02x}" for c in [*range(0, 9), *range(11, 32), *range(127, 160)]}


def printable(text: str) -> str:
    return text.translate(_CONTROL)


def _cell(value: Any) -> str:
    if isinstance(value, str):
        return printable(value)
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


def tidy_table(report: Report) -> Table:
    """The table --format csv / ndjson print (see Report.tidy)."""
    if report.tidy is not None:
        return report.tidy
    if len(report.tables) == 1:
        return report.tables[0]
    raise ValueError("this report has no tidy table for csv/ndjson")  # a bug: every command builds one


def _raw(value: Any) -> Any:
    if isinstance(value, Fraction):
        return int(value) if value.denominator == 1 else float(value)
    return value


def _csv(report: Report) -> str:
    import csv

    table = tidy_table(report)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(table.columns)
    for row in table.rows:
        writer.writerow(["" if v is None else _raw(v) for v in row])
    return buf.getvalue()


def _ndjson(report: Report) -> str:
    """One JSON object per row of the tidy table, keys = its columns."""
    table = tidy_table(report)
    return "".join(json.dumps(dict(zip(table.columns, (_raw(v) for v in row))), default=_json_default) + "\n"
                   for row in table.rows)


def _longest_word(texts: list[str], short_cell: int = SHORT_CELL) -> int:
    """The narrowest a column may be: its longest word, a cell of at most
    `short_cell` characters ("0 B", "40.00 GiB") counting as one, at most WORD_WIDTH_MAX."""
    words = [len(text) if len(text) <= short_cell else max(map(len, text.split()), default=0) for text in texts]
    return min(max(words, default=1), WORD_WIDTH_MAX)


def _column_widths(table: Table, cells: list[list[str]], width: int) -> list[int | None]:
    """Widths for a table wider than the terminal. No cell word is broken (a
    number split over two lines misreads: "131,0" / "72"), header words are kept
    whole where room allows (the columns needing least first), and the columns
    widen to their natural width, those needing least first. None (rich's own folding)
    when the table fits, or when even the cells' words do not."""
    count = len(table.columns)
    budget = width - (3 * count + 1)  # rich's borders and one space of padding each side
    columns = [[row[i] for row in cells] for i in range(count)]
    natural = [max(len(line) for text in [head] + column for line in text.splitlines() or [""])
               for head, column in zip(table.columns, columns)]
    floor = [_longest_word(column) for column in columns]
    if sum(floor) > budget:  # short cells kept whole do not fit: they may break between words too
        floor = [_longest_word(column, short_cell=0) for column in columns]
    if sum(natural) <= budget or sum(floor) > budget:
        return [None] * count
    head = [max(f, _longest_word([h], short_cell=0)) for f, h in zip(floor, table.columns)]
    for i in sorted(range(count), key=lambda i: head[i] - floor[i]):
        if sum(floor) - floor[i] + head[i] <= budget:
            floor[i] = head[i]
    spare = budget - sum(floor)
    for i in sorted(range(count), key=lambda i: natural[i] - floor[i]):  # as many whole columns as fit
        grow = min(natural[i] - floor[i], spare)
        floor[i] += grow
        spare -= grow
    return floor


def console(**kwargs):
    """A rich Console whose write to a closed pipe (`| head`) raises BrokenPipeError for the CLI to handle (exit 0,
    or go on saving a bench run's files): rich's own Console.on_broken_pipe exits with status 1, which kvplan
    keeps for a broken budget. A console on stderr (stderr=True: bench's progress bar and notes) goes quiet instead,
    and the work goes on: `kvplan bench ... 2>&1 | head` still writes its --json / --csv files."""
    from rich.console import Console

    class PipeAwareConsole(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            if self.stderr:
                _to_devnull(2)  # what sys.stderr still buffers would fail again at exit (status 120)
                return
            raise BrokenPipeError

    return PipeAwareConsole(**kwargs)


def _to_devnull(fd: int) -> None:
    import os

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), fd)
    except OSError:
        pass


def _rich(report: Report, stream) -> None:
    from rich.markup import escape
    from rich.table import Table as RichTable

    # width=None: rich measures the terminal, honours $COLUMNS, else 80 columns
    out = console(file=stream, highlight=False, soft_wrap=False)
    if report.headline:
        out.print(printable(report.headline), markup=False)
    for table in report.tables:
        # the title is a line of its own, wrapped (if at all) at the terminal's width: as rich's table title it
        # wrapped at the table's, splitting "(budget 16)" over two lines above a narrow table
        out.print(printable(table.title), markup=False)
        rt = RichTable()
        cells = [[_cell(v) for v in row] for row in table.rows]
        widths = _column_widths(table, cells, out.width)
        for i, col in enumerate(table.columns):
            # fold: a cell too wide for its column continues on the next line, never cut
            rt.add_column(col, justify="right" if i in table.numeric else "left", overflow="fold",
                          width=widths[i])
        for row in cells:
            rt.add_row(*[escape(text) for text in row])  # cells print as written: no [markup]
        out.print(rt)
    for line in report.lines:  # plain lines: never wrapped, so they stay greppable
        stream.write(printable(line) + "\n")


def render(report: Report, fmt: str = "table", stream=None) -> None:
    stream = stream or sys.stdout
    if stream is None:  # the process was started with its standard output closed (`kvplan models >&-`)
        from .errors import KvplanError

        raise KvplanError("cannot write the output: standard output is closed", "run it with stdout open")
    if fmt in ("json", "csv", "ndjson"):
        # the plain lines are not part of these documents: a warning among them goes to stderr, as every other
        # diagnostic does, so a script reading the data still sees it (`--batch 50 does not fit`)
        for line in report.lines:
            if line.startswith("warning:"):
                sys.stderr.write(f"kvplan: {line}\n")
    if fmt in report.streams:
        report.streams[fmt](stream)
    elif fmt == "json":
        stream.write(to_json(report.data) + "\n")
    elif fmt == "csv":
        stream.write(_csv(report))
    elif fmt == "ndjson":
        stream.write(_ndjson(report))
    elif fmt == "markdown":
        stream.write(_markdown(report))
    else:
        _rich(report, stream)
