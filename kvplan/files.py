"""Files the user gives kvplan, read bounded; files kvplan writes for the user:
checked before any work, written whole or not at all.

- `read_head`: the head of a regular file of any size (a server log), UTF-8 or
  UTF-16 with its byte-order mark.
- `read_bounded`: a regular file only (a device, pipe or socket would block or
  never end: /dev/zero, a FIFO), and at most a stated number of bytes (a 5 GB
  file given by mistake is refused at once, not read into memory).

- `check_output`: before a long run, the target's folder must exist and take a
  file, the target must not be a folder, and an existing file is replaced only
  with --force.
- `write_atomic` (and `replacing`, for writers that take a path or stream: sweep
  --out, the plots): a temp file in the target's folder, fsynced, moved over the
  target with os.replace, then the folder fsynced; the existing file's
  permissions are kept (a new file gets the usual umask mode, not mkstemp's
  0600); a symlink is followed, so the file it names is replaced and the link
  stays; SIGTERM while writing removes the temp file before the process ends.
  A file the user may not write (`read_only`: no write bit for the user, or
  os.access says no) is refused with EACCES: os.replace needs only the folder's
  permission and would put a new file over it.
- `save_or_rescue`: when the final write still fails, the text goes next to the
  requested path, else to the temp folder, else to stdout: results are never lost.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import signal
import sys
import tempfile
import threading
from datetime import datetime, timezone

from .errors import KvplanError, UsageError

MIB = 1024**2


def clipped(text: str, limit: int = 60) -> str:
    """`text` for a message: whole when short, else its start, an ellipsis and its length."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def check_path_name(path, what: str, error: type[KvplanError] = UsageError) -> None:
    """Refuse a path no file can have, before anything looks it up: a name longer than the file system
    takes (os.stat says ENAMETOOLONG before any lookup, and pathlib's is_dir / exists raise it rather than
    answer False) or one holding a NUL character (a scenario's YAML can write one; os.stat raises ValueError)."""
    try:
        os.stat(path)
    except ValueError:
        raise error(f"{what} {clipped(repr(str(path)))}: a path cannot hold a NUL character",
                    "give the file's real path") from None
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            raise error(f"{what} {clipped(str(path))}: the name is too long for the file system "
                        f"({len(os.fsencode(str(path))):,} bytes)",
                        "a file or folder name takes at most 255 bytes on most file systems: give a shorter path") from None



def regular_file_size(path, what: str, error: type[KvplanError] = UsageError) -> int:
    """The size of `path`, refused (one `error` line) unless it is a regular file;
    checked with stat, which does not block on a pipe the way open does."""
    if not str(path).strip():  # ": no such file" named nothing
        raise error(f"the path is an empty string, not {what}", "give the file's path")
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise error(f"{path}: no such file") from None
    except OSError as exc:
        raise error(f"{path}: cannot read ({exc.strerror or exc})") from None
    if stat.S_ISDIR(info.st_mode):
        raise error(f"{path}: is a folder, not {what}")
    if not stat.S_ISREG(info.st_mode):
        raise error(f"{path}: not a regular file (a device, pipe or socket), not {what}",
                    "copy what it gives into a file first, and give that file's path")
    return info.st_size


def read_head(path, what: str, limit_bytes: int, error: type[KvplanError] = UsageError) -> tuple[str, int]:
    """(the first `limit_bytes` of a regular file as text, the file's size): a long log is read from its head
    (what follows is said by the caller), never refused for its size."""
    size = regular_file_size(path, what, error)
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit_bytes)
    except OSError as exc:
        raise error(f"{path}: cannot read ({exc.strerror or exc})") from None
    return decode_text(data), size


def not_utf8_hint(data: bytes) -> str:
    """What to do with a file that is not UTF-8 text (configs and scenarios are read as UTF-8 only)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "it is UTF-16 text, as Windows PowerShell's '>' writes: save it as UTF-8"
    return "save it as UTF-8 text, or check that the path names the right file"


def decode_text(data: bytes) -> str:
    """Text of a log: UTF-8 (undecodable bytes replaced), or UTF-16 when it starts with that byte-order mark,
    as Windows PowerShell's `>` writes a server's output (read as UTF-8 it was every other byte a NUL, and no
    start-up line was found in it)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    return data.decode("utf-8", errors="replace")


def read_bounded(path, what: str, limit_bytes: int, error: type[KvplanError] = UsageError,
                 hint: str | None = None) -> bytes:
    """The bytes of a regular file of at most `limit_bytes`."""
    size = regular_file_size(path, what, error)
    if size > limit_bytes:
        raise error(f"{path}: {size:,} bytes, above the {limit_bytes // MIB} MiB limit for {what}",
                    hint or f"check that the path names {what}")
    try:
        with open(path, "rb") as fh:
            data = fh.read(limit_bytes + 1)
    except OSError as exc:
        raise error(f"{path}: cannot read ({exc.strerror or exc})") from None
    if len(data) > limit_bytes:  # grew while being read
        raise error(f"{path}: above the {limit_bytes // MIB} MiB limit for {what}",
                    hint or f"check that the path names {what}")
    return data


def check_output(path: str | None, flag: str, force: bool, suffixes: tuple[str, ...] | None = None,
                 inputs: tuple[str, ...] = ()) -> None:
    """Refuse an output path that cannot be written (or, given suffixes, of a type not
    written), before any work starts; and, --force or not, one that is an input of the run
    (a model's config file, or a file inside a model folder given as the model)."""
    if path is None:
        return
    check_path_name(path, flag)
    _refuse_input(path, flag, inputs)
    if not str(path).strip():  # given, but empty: not the same as leaving the option out
        raise UsageError(f"{flag} is an empty string", "give a file name, or leave the option out")
    if suffixes is not None and os.path.splitext(path)[1].lower() not in suffixes:
        kind = os.path.splitext(path)[1] or "(none)"
        raise UsageError(f"{flag} {path}: unsupported file type {kind!r}", f"use one of {', '.join(suffixes)}")
    if os.path.isdir(path):
        raise UsageError(f"{flag} {path}: is a folder", "give a file name inside it")
    try:
        os.stat(path)
    except OSError as exc:  # a loop of links: the write at the end failed with an internal error, after the run
        if exc.errno == errno.ELOOP:
            raise UsageError(f"{flag} {path}: a loop of symlinks, with no file at its end to write",
                             "remove or fix the links, or give another path") from None
    target = os.path.realpath(path)
    _refuse_special(target, path, flag)
    folder = os.path.dirname(target) or "."
    if not os.path.isdir(folder):
        if os.path.islink(path):  # a link to a missing folder: the folder the user can see is there
            raise UsageError(f"{flag} {path}: a symlink to {os.readlink(path)}, in a folder that does not exist",
                             "fix or remove the link, or give another path")
        shown = os.path.dirname(path) or "."
        if os.path.lexists(folder):  # "the folder config.json does not exist" of a file the user can see
            raise UsageError(f"{flag} {path}: {shown} is a file, not a folder", "give a path in a folder")
        raise UsageError(f"{flag} {path}: the folder {shown} does not exist",
                         "create it first (mkdir -p), or give another path")
    if os.path.exists(target):
        if not force:
            raise UsageError(f"{flag} {path}: the file exists", "pass --force to overwrite it")
        if not os.access(target, os.W_OK):
            raise UsageError(f"{flag} {path}: the file is not writable")
    try:  # the only reliable test of a folder (ACLs, read-only mounts, root)
        fd, probe = tempfile.mkstemp(prefix=".kvplan-probe-", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise UsageError(f"{flag} {path}: cannot write in {folder} ({exc.strerror or exc})") from None


def _refuse_special(target: str, path: str, flag: str) -> None:
    """A file is written by moving a new one over the target: over a device (a link to /dev/null), a pipe or a
    socket that would replace the node itself (`--out null.csv --force`, null.csv -> /dev/null, turned /dev/null
    into a regular file when run as root), so those are refused, --force or not."""
    try:
        mode = os.stat(target).st_mode
    except OSError:
        return
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        shown = path if os.path.realpath(path) == os.path.abspath(path) else f"{path} (-> {target})"
        raise UsageError(f"{flag} {shown}: not a regular file (a device, pipe or socket); kvplan writes a file by "
                         "replacing it whole, never such a node", "give the path of a file")


def _refuse_input(path: str, flag: str, inputs: tuple[str, ...]) -> None:
    if not str(path).strip() or not os.path.exists(path):
        return
    target = os.path.realpath(path)
    for given in inputs:
        if not given or not os.path.exists(given):
            continue  # a bundled name or a Hub id: nothing on disk to protect
        source = os.path.realpath(given)
        if target == source or (os.path.isdir(source) and target.startswith(source.rstrip(os.sep) + os.sep)):
            raise UsageError(f"{flag} {path} is an input of this run ({given}); it is never overwritten",
                             "write the output elsewhere")


def _default_mode() -> int:
    with _UMASK_LOCK:
        mask = os.umask(0)
        os.umask(mask)
    return 0o666 & ~mask


_UMASK_LOCK = threading.Lock()


@contextlib.contextmanager
def _exit_on_sigterm():
    """While writing, turn SIGTERM into SystemExit so `finally` blocks remove temp files."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        raise SystemExit(128 + signum)

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except (ValueError, OSError):  # not settable here (embedded interpreter)
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _fsync_folder(folder: str) -> None:
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
    try:
        fd = os.open(folder, flags)
    except OSError:  # not possible on this platform (Windows): the rename is still atomic
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def read_only(info: os.stat_result, target: str) -> bool:
    """Whether the file (stat `info` of path `target`) is one its user may not write: its mode gives no write
    bit to the class the user is in (owner, group, others), or os.access says so. Read from the mode bits too, as
    root's os.access answers writable whatever the mode."""
    if not os.access(target, os.W_OK):
        return True
    if info.st_uid == os.geteuid():
        bit = stat.S_IWUSR
    elif info.st_gid == os.getegid() or info.st_gid in os.getgroups():
        bit = stat.S_IWGRP
    else:
        bit = stat.S_IWOTH
    return not info.st_mode & bit


@contextlib.contextmanager
def replacing(path, *, make_folders: bool = False):
    """A temp file's path in the folder of `path` (of the file its symlink names), to write by any means (a
    stream, matplotlib's savefig, pandas' to_parquet); when the block ends without an error the temp file is
    fsynced and moved over the target, else removed, so the target is the old file or the whole new one.
    The temp name ends in the target's suffix, so writers that choose a format from it choose the same one."""
    target = os.path.realpath(path)
    folder = os.path.dirname(target) or "."
    if make_folders:
        os.makedirs(folder, exist_ok=True)
    try:
        info = os.stat(target)
    except FileNotFoundError:
        mode = _default_mode()
    else:
        if not stat.S_ISREG(info.st_mode):  # os.replace would put a file where a device or pipe was
            raise OSError(errno.EINVAL, f"not a regular file, not replaced: {target}")
        if read_only(info, target):  # os.replace needs only the folder's write permission
            raise PermissionError(errno.EACCES, f"read-only file (mode {info.st_mode & 0o7777:04o}), not replaced: "
                                                f"{target}")
        mode = info.st_mode & 0o7777
    tmp = None
    with _exit_on_sigterm():
        try:
            fd, tmp = tempfile.mkstemp(prefix=".kvplan-", suffix=".tmp" + os.path.splitext(target)[1], dir=folder)
            os.close(fd)
            yield tmp
            fd = os.open(tmp, os.O_RDWR)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            os.chmod(tmp, mode)
            os.replace(tmp, target)
            tmp = None
            _fsync_folder(folder)
        finally:
            if tmp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)


def write_atomic(path: str, text: str | bytes, *, make_folders: bool = False) -> str:
    """Replace `path` (or the file its symlink names) with `text`, whole or not at all.

    Returns the path actually written (the symlink's target when `path` is a link).
    """
    data = text.encode("utf-8") if isinstance(text, str) else text
    with replacing(path, make_folders=make_folders) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(data)
    return os.path.realpath(path)


def save_or_rescue(path: str, text: str, flag: str) -> str | None:
    """Write `text` to `path`; None when that worked, else one line saying where it went instead."""
    try:
        write_atomic(path, text)
        return None
    except OSError as exc:
        why = exc.strerror or str(exc)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    base = os.path.basename(path) or "kvplan-output"
    for candidate in (f"{path}.rescued-{stamp}", os.path.join(tempfile.gettempdir(), f"{base}.rescued-{stamp}")):
        try:
            if os.path.exists(candidate):
                continue
            write_atomic(candidate, text)
            return f"{flag} {path}: cannot write ({why}); the results were saved to {candidate}"
        except OSError:
            continue
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    sys.stdout.flush()
    return f"{flag} {path}: cannot write ({why}); the results were printed on stdout above"
