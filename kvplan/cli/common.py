"""Shared CLI pieces: option parsing helpers, the output sink, the error map."""

from __future__ import annotations

import os
import sys
import warnings

from ..errors import KvplanError, UsageError
from ..render import FORMATS, Report, render


def check_format(fmt: str) -> str:
    if fmt not in FORMATS:
        raise UsageError(f"--format {fmt!r} is not one of {', '.join(FORMATS)}")
    return fmt


def emit(report: Report, fmt: str) -> None:
    try:
        render(report, check_format(fmt), sys.stdout)
    except BrokenPipeError:  # caught here: click would turn it into exit 1
        import typer

        _silence_stdout()
        raise typer.Exit(0) from None


def _silence_stdout() -> None:
    """After the reader of stdout went away (`| head`): what is still buffered would fail again at exit, so
    send it nowhere (the Python docs' recipe for SIGPIPE)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def refuse_empty_options(ctx) -> None:
    """An option given as an empty string ('--kv-memory ""', '--revision=') is not the option left out: many
    commands test a value's truth, so '' was taken for "not given" (--kv-memory, --gpu-memory, --max-model-len,
    calibrate's --model, --version, --as-version, bench's --context ran with their defaults, without a word).
    Refused here, for every single-valued option of every command, once click has read them; repeatable
    options and arguments reach their own parsers, which name an empty item."""
    if ctx.resilient_parsing:  # shell completion parses half-typed lines
        return
    for param in ctx.command.params:
        if param.param_type_name != "option" or param.multiple or getattr(param, "is_flag", False):
            continue
        if ctx.params.get(param.name) == "":
            flag = max(param.opts, key=len)
            raise UsageError(f"{flag} is an empty string", "give a value, or leave the option out")


def command_class():
    """The click command class every kvplan command is built with: typer's own, plus `refuse_empty_options`."""
    from typer.core import TyperCommand

    class KvplanCommand(TyperCommand):
        def parse_args(self, ctx, args):
            rest = super().parse_args(ctx, args)
            refuse_empty_options(ctx)
            return rest

    return KvplanCommand


def error_line(message: str) -> None:
    sys.stderr.write(f"kvplan: error: {message}\n")


def _warning_line(message, category, filename, lineno, file=None, line=None):
    sys.stderr.write(f"kvplan: warning: {message}\n")


def _usage_errors() -> tuple[type, ...]:
    """Option-parsing errors: typer >= 0.26 vendors click and raises its own
    TyperException; older typer raises click's ClickException. Checked only when
    an exception reaches the map, so the cold start imports nothing more."""
    import typer

    own = getattr(typer, "TyperException", None)
    if own is not None:
        return (own,)
    import click

    return (click.ClickException,)


def _disk_full(exc: BaseException) -> bool:
    import errno

    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def run(app) -> int:
    """Run the typer app; map every failure to one line and an exit code."""
    import typer

    warnings.showwarning = _warning_line
    from ..errors import KvplanWarning

    warnings.filterwarnings("always", category=KvplanWarning)
    debug = os.environ.get("KVPLAN_DEBUG", "").strip().lower() in ("1", "true", "yes", "on")
    try:
        result = app(prog_name="kvplan", standalone_mode=False)  # the same name under `python -m kvplan`
        # with standalone_mode off, click returns typer.Exit's code instead of raising
        return result if isinstance(result, int) else 0
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:
        error_line("aborted")
        return 1
    except KvplanError as exc:
        if debug:
            raise
        error_line(exc.one_line())
        return exc.exit_code
    except _usage_errors() as exc:  # usage errors from option parsing: one line, exit 2
        if type(exc).__name__ == "NoArgsIsHelpError":  # `kvplan` alone: the help, as before
            exc.show()
            return getattr(exc, "exit_code", 2)
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        ctx = getattr(exc, "ctx", None)
        path = getattr(ctx, "command_path", None)
        error_line(message + (f" (see '{path} -h')" if path else ""))
        return getattr(exc, "exit_code", 2)
    except BrokenPipeError:  # the reader went away (`| head`): not an error, and nothing left to say
        _silence_stdout()
        return 0
    except KeyboardInterrupt:
        error_line("interrupted")
        return 130
    except Exception as exc:  # a bug: say so in one line unless debugging
        if debug:
            raise
        if _disk_full(exc):  # the disk behind stdout or an output file: the machine's state, not a bug
            error_line(f"cannot write the output: {exc.strerror} (free space, or write it elsewhere)")
            return 1
        error_line(f"internal error: {type(exc).__name__}: {exc} (set KVPLAN_DEBUG=1 for the traceback)")
        return 1
