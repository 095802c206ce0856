"""Walks over file trees a sandboxed program wrote: removal, disk accounting, copy-back, chown.

Spec ``shared/spec/sgibench.md`` §8 (untrusted code; nothing may be left on the host). A program decides what its
tree looks like, so every walk here holds at most a few file descriptors, never recurses, never builds a path
longer than one name (so PATH_MAX and 3,000-deep trees do not matter), never follows a symlink, and stays on one
file system (``dev``: a bind-mounted input is skipped, never entered). ``fix_perms``: the caller owns the files
(not root) and may add ``u+rwx`` to a directory the program locked, or ``u+r`` to a file, to get in.
"""

from __future__ import annotations

import fcntl
import os
import stat
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

__all__ = ["TreeChanged", "copy_tree", "list_tree", "remove_tree", "tree_usage", "walk"]

_O_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_O_PATH = os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC
_COPY_CHUNK = 1 << 20


class TreeChanged(Exception):
    """The tree changed under a walk (``..`` no longer led back to the directory it came from)."""


class _Stop(Exception):
    """A visitor ends the walk early (a budget ran out)."""


def _reopen_with_mode(name: str, dir_fd: int | None, add: int, flags: int) -> int:
    """Add permission bits to an entry the caller owns (through an O_PATH descriptor, so never a symlink's
    target), then open it again through that descriptor."""
    pfd = os.open(name, _O_PATH, dir_fd=dir_fd)
    try:
        mode = os.fstat(pfd).st_mode
        if stat.S_ISLNK(mode):
            raise PermissionError(f"{name!r} is a symlink")
        os.chmod(f"/proc/self/fd/{pfd}", stat.S_IMODE(mode) | add)
        return os.open(f"/proc/self/fd/{pfd}", flags & ~os.O_NOFOLLOW)
    finally:
        os.close(pfd)


def open_dir(name: str, dir_fd: int | None = None, *, fix_perms: bool = False, writable: bool = False) -> int:
    """Open a directory without following a symlink. With ``fix_perms``, make sure the caller can list and enter
    it (``u+rx``), and also change it when ``writable`` (``u+rwx``)."""
    need = 0o700 if writable else 0o500
    try:
        fd = os.open(name, _O_DIR, dir_fd=dir_fd)
    except PermissionError:
        if not fix_perms:
            raise
        return _reopen_with_mode(name, dir_fd, need, _O_DIR)
    if fix_perms:
        mode = os.fstat(fd).st_mode
        if mode & need != need:
            os.fchmod(fd, stat.S_IMODE(mode) | need)
    return fd


def _listing(fd: int) -> list[str]:
    with os.scandir(fd) as it:
        return sorted(e.name for e in it)


Visit = Callable[[int, str, os.stat_result, int], bool]


def walk(top_fd: int, visit: Visit, *, enter: Callable[[int, str, int, int], bool] | None = None,
         leave: Callable[[int, str, int], None] | None = None, dev: int | None = None,
         fix_perms: bool = False, writable: bool = False) -> None:
    """Depth-first walk below the directory ``top_fd`` holding one descriptor at a time.

    ``visit(dir_fd, name, lstat, depth)`` sees every entry of a directory (depth 1 = entries of the top) and
    returns True to descend into it (directories only). ``enter(dir_fd, name, child_fd, depth)`` runs after a
    subdirectory was opened and may veto the descent; ``leave(parent_fd, name, depth)`` runs when its subtree is
    done. Entries on another file system than ``dev`` (mount points) are never shown. Directories are climbed
    back through ``..`` and checked against the one descended from; :class:`TreeChanged` if it differs.
    ``fix_perms``/``writable``: see :func:`open_dir`.
    """
    fd = os.dup(top_fd)
    names: list[str] = []
    ids: list[tuple[int, int]] = []
    try:
        if fix_perms:
            need = 0o700 if writable else 0o500
            mode = os.fstat(fd).st_mode
            if mode & need != need:
                os.fchmod(fd, stat.S_IMODE(mode) | need)
        pending = [_visit_all(fd, visit, 1, dev)]
        while True:
            if pending[-1]:
                name = pending[-1].pop()
                try:
                    child = open_dir(name, fd, fix_perms=fix_perms, writable=writable)
                except OSError:
                    continue
                other_fs = dev is not None and os.fstat(child).st_dev != dev
                if other_fs or (enter is not None and not enter(fd, name, child, len(names) + 1)):
                    os.close(child)
                    continue
                st = os.fstat(fd)
                ids.append((st.st_dev, st.st_ino))
                names.append(name)
                os.close(fd)
                fd = child
                pending.append(_visit_all(fd, visit, len(names) + 1, dev))
                continue
            pending.pop()
            if not names:
                return
            up = os.open("..", _O_DIR & ~os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = up
            ust = os.fstat(fd)
            if (ust.st_dev, ust.st_ino) != ids.pop():
                raise TreeChanged("a directory moved during the walk")
            name = names.pop()
            if leave is not None:
                leave(fd, name, len(names) + 1)
    finally:
        os.close(fd)


def _visit_all(fd: int, visit: Visit, depth: int, dev: int | None) -> list[str]:
    """Visit every entry of one directory; returns the subdirectories to descend into (popped from the end)."""
    subdirs = []
    for name in _listing(fd):
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except OSError:
            continue
        if dev is not None and st.st_dev != dev:
            continue
        if visit(fd, name, st, depth) and stat.S_ISDIR(st.st_mode):
            subdirs.append(name)
    subdirs.reverse()
    return subdirs


# --- removal --------------------------------------------------------------------------------------------------
def remove_tree(path: str, *, attempts: int = 3) -> str | None:
    """Remove ``path`` and everything below it; returns None, or a one-line reason it could not (never raises).

    Works on trees any depth, with locked directories (the caller must own them, or be root), fifos, sockets and
    odd names; a symlink is removed, never followed."""
    problem = None
    for _ in range(attempts):
        try:
            _remove_once(path)
            return None
        except FileNotFoundError:
            return None
        except (OSError, TreeChanged) as exc:
            problem = f"could not remove {path}: {exc}"
    return problem


_FS_IOC_GETFLAGS, _FS_IOC_SETFLAGS = 0x80086601, 0x40086602
_FS_STICKY_FLAGS = 0x10 | 0x20  # FS_IMMUTABLE_FL | FS_APPEND_FL


def _clear_inode_flags(fd: int) -> None:
    """Drop the immutable and append-only flags (only root can have set them: an unsandboxed root run)."""
    buf = bytearray(8)
    try:
        fcntl.ioctl(fd, _FS_IOC_GETFLAGS, buf)
        flags = int.from_bytes(buf[:4], sys.byteorder)
        if flags & _FS_STICKY_FLAGS:
            fcntl.ioctl(fd, _FS_IOC_SETFLAGS, (flags & ~_FS_STICKY_FLAGS).to_bytes(4, sys.byteorder) + bytes(4))
    except OSError:
        pass


def _clear_inode_flags_at(dir_fd: int, name: str) -> None:
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return
    try:
        _clear_inode_flags(fd)
    finally:
        os.close(fd)


def _retrying(op: Callable[[], None], dir_fd: int, name: str, errors: list[str]) -> None:
    """Run an unlink/rmdir; on EPERM clear the flags of the entry and its directory and try once more."""
    for attempt in (1, 2):
        try:
            op()
            return
        except FileNotFoundError:
            return
        except PermissionError as exc:
            if attempt == 2:
                errors.append(f"{name!r}: {exc.strerror}")
                return
            _clear_inode_flags_at(dir_fd, name)
            _clear_inode_flags(dir_fd)
        except OSError as exc:
            errors.append(f"{name!r}: {exc.strerror}")
            return


def _remove_once(path: str) -> None:
    try:
        top = open_dir(path, fix_perms=True, writable=True)
    except OSError as exc:
        if os.path.islink(path) or (os.path.lexists(path) and not os.path.isdir(path)):
            os.unlink(path)
            return
        raise exc
    errors: list[str] = []

    def unlink_files(dir_fd: int, name: str, st: os.stat_result, depth: int) -> bool:
        if stat.S_ISDIR(st.st_mode):
            return True
        _retrying(lambda: os.unlink(name, dir_fd=dir_fd), dir_fd, name, errors)
        return False

    def enter(dir_fd: int, name: str, child_fd: int, depth: int) -> bool:
        _clear_inode_flags(child_fd)
        return True

    def rmdir(parent_fd: int, name: str, depth: int) -> None:
        _retrying(lambda: os.rmdir(name, dir_fd=parent_fd), parent_fd, name, errors)

    try:
        _clear_inode_flags(top)
        walk(top, unlink_files, enter=enter, leave=rmdir, fix_perms=True, writable=True)
    finally:
        os.close(top)
    try:
        os.rmdir(path)
    except OSError as exc:
        raise OSError(exc.errno, f"{exc.strerror}{' (' + errors[0] + ')' if errors else ''}") from None


# --- accounting ---------------------------------------------------------------------------------------------------
def tree_usage(top_fd: int, *, max_entries: int, fix_perms: bool = False) -> tuple[int, int]:
    """(allocated bytes by ``st_blocks``, entries) below ``top_fd``; counting stops past ``max_entries``. A file
    with several hard links is counted once (it is on the disk once). Raises :class:`TreeChanged` when the tree
    moved under the walk (the caller counts again later)."""
    total = entries = 0
    linked: set[tuple[int, int]] = set()

    def count(dir_fd: int, name: str, st: os.stat_result, depth: int) -> bool:
        nonlocal total, entries
        entries += 1
        if st.st_nlink < 2 or (st.st_dev, st.st_ino) not in linked:
            if st.st_nlink >= 2:
                linked.add((st.st_dev, st.st_ino))
            total += st.st_blocks * 512
        if entries > max_entries:
            raise _Stop
        return True

    try:
        walk(top_fd, count, dev=os.fstat(top_fd).st_dev, fix_perms=fix_perms)
    except _Stop:
        pass
    return total, entries


def list_tree(root: str | Path) -> dict[str, os.stat_result]:
    """Relative path -> lstat of everything below ``root`` (paths may be longer than PATH_MAX)."""
    fd = open_dir(str(root))
    rel: list[str] = []
    found: dict[str, os.stat_result] = {}

    def visit(dir_fd: int, name: str, st: os.stat_result, depth: int) -> bool:
        found["/".join([*rel, name])] = st
        return True

    def enter(dir_fd: int, name: str, child_fd: int, depth: int) -> bool:
        rel.append(name)
        return True

    try:
        walk(fd, visit, enter=enter, leave=lambda parent_fd, name, depth: rel.pop())
    finally:
        os.close(fd)
    return found


def largest_file(top_fd: int, *, max_entries: int, fix_perms: bool = False) -> int:
    """The apparent size of the largest regular file below ``top_fd`` (0 when none)."""
    largest = entries = 0

    def look(dir_fd: int, name: str, st: os.stat_result, depth: int) -> bool:
        nonlocal largest, entries
        entries += 1
        if entries > max_entries:
            raise _Stop
        if stat.S_ISREG(st.st_mode):
            largest = max(largest, st.st_size)
        return True

    try:
        walk(top_fd, look, dev=os.fstat(top_fd).st_dev, fix_perms=fix_perms)
    except (_Stop, TreeChanged):
        pass
    return largest


def chown_tree(top_fd: int, uid: int) -> None:
    """Give the directory and everything on its file system below it to ``uid`` (never through a symlink, never
    across a mount point; used before the program starts, when nothing else changes the tree)."""
    os.fchown(top_fd, uid, uid)

    def chown(dir_fd: int, name: str, st: os.stat_result, depth: int) -> bool:
        os.chown(name, uid, uid, dir_fd=dir_fd, follow_symlinks=False)
        return True

    walk(top_fd, chown, dev=os.fstat(top_fd).st_dev)


# --- copy-back ----------------------------------------------------------------------------------------------------
def copy_tree(top_fd: int, dest: Path, *, max_bytes: int, max_entries: int, max_depth: int, max_path: int,
              skip: set[str] | frozenset[str] = frozenset(), fix_perms: bool = False) -> list[str]:
    """Copy the regular files and directories below ``top_fd`` into ``dest``; returns what was left out.

    Budgets: at most ``max_bytes`` of *apparent* file size in total (a sparse or hard-linked file is copied at
    its full size, so it is counted so), ``max_entries`` entries, ``max_depth`` directory levels and relative
    paths of at most ``max_path`` bytes (so every copied file can be opened by path on the host); never a
    symlink, fifo, socket or device; never an entry in ``skip`` (relative paths, e.g. input mount points).
    A file that does not fit is left out whole, never cut."""
    dest.mkdir(parents=True, exist_ok=True)
    dest_fds = [open_dir(str(dest))]
    rel: list[str] = []
    left_out: Counter[str] = Counter()
    used = entries = 0

    def copy(dir_fd: int, name: str, st: os.stat_result, depth: int) -> bool:
        nonlocal used, entries
        path = "/".join([*rel, name])
        if path in skip:
            return False
        entries += 1
        if entries > max_entries:
            left_out[f"over {max_entries} entries"] += 1
            return False
        if len(os.fsencode(path)) > max_path:
            left_out[f"path longer than {max_path} bytes"] += 1
            return False
        if stat.S_ISDIR(st.st_mode):
            if depth > max_depth:
                left_out[f"deeper than {max_depth} levels"] += 1
                return False
            return True
        if not stat.S_ISREG(st.st_mode):
            left_out["not a regular file"] += 1
            return False
        if used + st.st_size > max_bytes:
            left_out[f"over the {max_bytes >> 20} MB output budget"] += 1
            return False
        try:
            used += _copy_file(dir_fd, name, dest_fds[-1], st.st_size, fix_perms)
        except OSError as exc:
            left_out[f"unreadable ({exc.strerror})"] += 1
        return False

    def enter(dir_fd: int, name: str, child_fd: int, depth: int) -> bool:
        try:
            os.mkdir(name, 0o755, dir_fd=dest_fds[-1])
        except FileExistsError:
            pass
        try:
            dest_fds.append(open_dir(name, dest_fds[-1]))
        except OSError as exc:
            left_out[f"destination unusable ({exc.strerror})"] += 1
            return False
        rel.append(name)
        return True

    def leave(parent_fd: int, name: str, depth: int) -> None:
        os.close(dest_fds.pop())
        rel.pop()

    try:
        walk(top_fd, copy, enter=enter, leave=leave, dev=os.fstat(top_fd).st_dev, fix_perms=fix_perms)
    except TreeChanged as exc:
        left_out[str(exc)] += 1
    finally:
        for fd in dest_fds:
            os.close(fd)
    return [f"output copy left out {n} entr{'y' if n == 1 else 'ies'}: {why}" for why, n in sorted(left_out.items())]


def _copy_file(src_dir: int, name: str, dest_dir: int, size: int, fix_perms: bool) -> int:
    """Copy at most ``size`` bytes of one regular file; returns the bytes copied."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        src = os.open(name, flags, dir_fd=src_dir)
    except PermissionError:
        if not fix_perms:
            raise
        src = _reopen_with_mode(name, src_dir, 0o400, flags)
    try:
        if not stat.S_ISREG(os.fstat(src).st_mode):
            raise OSError(0, "not a regular file")
        dst = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644,
                      dir_fd=dest_dir)
        copied = 0
        try:
            while copied < size:
                n = os.sendfile(dst, src, copied, min(_COPY_CHUNK, size - copied))
                if n == 0:
                    break
                copied += n
        finally:
            os.close(dst)
        return copied
    finally:
        os.close(src)
