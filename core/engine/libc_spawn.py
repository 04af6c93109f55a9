"""``posix_spawn`` and ``posix_spawnp`` called in the C library directly, where it has
``posix_spawn_file_actions_addclosefrom_np`` (glibc 2.34 and later).

Two things ``os.posix_spawn`` cannot do (Python 3.11): it holds the GIL while the
child starts (with ``vfork`` the call returns only once the child has called
``exec``), so every other thread of the engine (the other worker loops, the lease
keeper) stops for the length of each spawn; and it cannot close a range of
descriptors, so the runner lists its own (``/proc/self/fd``) before every spawn
to close those a task must not inherit. A call through :mod:`ctypes` drops the GIL
for its length, and ``addclosefrom_np(3)`` closes in the child whatever is open
above stderr, as ``Popen``'s ``close_fds`` does.

The functions take ``os.posix_spawn``'s arguments (the subset the runner uses) and
raise its errors in its words: ``OSError`` with the system's message for a program
that cannot start, ``ValueError`` for a NUL byte or an ill-formed variable name,
``UnicodeEncodeError`` for text the file system cannot encode. Elsewhere
(:data:`posix_spawn` is None) the runner uses ``os.posix_spawn`` as before.
"""

from __future__ import annotations

import array
import ctypes
import os
import sys
from collections.abc import Mapping, Sequence
from itertools import accumulate
from typing import Any

#: A file action of this module's own: close every descriptor from the given one up (``(CLOSE_FROM, 3)``).
CLOSE_FROM = -1

#: ``POSIX_SPAWN_SETSIGDEF`` and ``POSIX_SPAWN_SETSID`` in glibc's ``spawn.h``.
_SETSIGDEF = 0x04
_SETSID = 0x80

#: Room for glibc's ``posix_spawn_file_actions_t`` (80 bytes), ``posix_spawnattr_t`` (336) and ``sigset_t`` (128).
_ACTIONS_SIZE = 256
_ATTR_SIZE = 1024
_SIGSET_SIZE = 256


def _libc() -> Any:
    """The C library with every function needed, typed; None where one is missing."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        needed = {
            "posix_spawn": [ctypes.POINTER(ctypes.c_int), ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p]
            + [ctypes.c_void_p] * 2,
            "posix_spawnp": [ctypes.POINTER(ctypes.c_int), ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p]
            + [ctypes.c_void_p] * 2,
            "posix_spawn_file_actions_init": [ctypes.c_void_p],
            "posix_spawn_file_actions_destroy": [ctypes.c_void_p],
            "posix_spawn_file_actions_adddup2": [ctypes.c_void_p, ctypes.c_int, ctypes.c_int],
            "posix_spawn_file_actions_addclose": [ctypes.c_void_p, ctypes.c_int],
            "posix_spawn_file_actions_addclosefrom_np": [ctypes.c_void_p, ctypes.c_int],
            "posix_spawnattr_init": [ctypes.c_void_p],
            "posix_spawnattr_setflags": [ctypes.c_void_p, ctypes.c_short],
            "posix_spawnattr_setsigdefault": [ctypes.c_void_p, ctypes.c_void_p],
            "sigemptyset": [ctypes.c_void_p],
            "sigaddset": [ctypes.c_void_p, ctypes.c_int],
        }
        for name, argtypes in needed.items():
            function = getattr(libc, name)
            function.argtypes = argtypes
            function.restype = ctypes.c_int
    except (OSError, AttributeError):  # no C library to load, or one without these (musl, macOS, older glibc)
        return None
    return libc


_LIBC: Any = _libc() if os.name == "posix" else None


def _check(code: int) -> None:
    if code:
        raise OSError(code, os.strerror(code))


def _encoded(text: str | bytes) -> bytes:
    data = os.fsencode(text)
    if b"\0" in data:
        raise ValueError("embedded null byte")
    return data


def _environment(env: Mapping[str, str]) -> bytes:
    """``NAME=value`` for each variable, NUL after each, encoded as ``os.fsencode`` does, checked as
    ``os.posix_spawn`` checks them. Encoded in one piece: a tenth of the cost of one call per string."""
    if not env:
        return b""
    if "" in env or ("=" in "\0".join(env) and any(key.find("=", 1) != -1 for key in env)):
        raise ValueError("illegal environment variable name")
    text = "\0".join([f"{key}={value}" for key, value in env.items()])
    if text.count("\0") != len(env) - 1:
        raise ValueError("embedded null byte")
    return text.encode(_FS_ENCODING, _FS_ERRORS) + b"\0"


_FS_ENCODING = sys.getfilesystemencoding()
_FS_ERRORS = sys.getfilesystemencodeerrors()


def _strings(block: bytes) -> tuple[object, array.array[int]]:
    """A C array of the NUL-ended strings of ``block``, ending with NULL, and what keeps it alive:
    the pointers worked out from the strings' lengths in one pass of C, not set one by one."""
    buffer = ctypes.create_string_buffer(block, len(block))
    ends = accumulate(map(_PLUS_ONE, map(len, block.split(b"\0")[:-1])), initial=ctypes.addressof(buffer))
    pointers = array.array("Q" if _POINTER_SIZE == 8 else "I", ends)
    pointers[-1] = 0  # the last one points past the block: the terminating NULL instead
    return buffer, pointers


_PLUS_ONE = (1).__add__
_POINTER_SIZE = ctypes.sizeof(ctypes.c_void_p)


def _start(
    search: bool,
    path: str,
    argv: Sequence[str],
    env: Mapping[str, str],
    *,
    file_actions: Sequence[tuple[int, ...]] = (),
    setsid: bool = False,
    setsigdef: Sequence[int] = (),
) -> int:
    libc: Any = _LIBC
    program = _encoded(path)
    args = _strings(b"".join([_encoded(arg) + b"\0" for arg in argv]))
    environment = _strings(_environment(env))
    attr = _attributes(libc, setsid, tuple(int(sig) for sig in setsigdef))
    actions, kept = _file_actions(libc, tuple(map(tuple, file_actions)))
    try:
        pid = ctypes.c_int()
        start = libc.posix_spawnp if search else libc.posix_spawn
        # The GIL dropped meanwhile.
        _check(start(ctypes.byref(pid), program, actions, attr, _address(args), _address(environment)))
        return pid.value
    finally:
        if not kept:
            libc.posix_spawn_file_actions_destroy(actions)


#: Built file actions by their list: the runner's tasks get the same pipes' numbers again and again, and
#: a spawn only reads them (from any thread). At most :data:`KEPT_ACTIONS` are kept, for the process's life.
_FILE_ACTIONS: dict[tuple[tuple[int, ...], ...], ctypes.Array[ctypes.c_char]] = {}
KEPT_ACTIONS = 64


def _file_actions(libc: Any, wanted: tuple[tuple[int, ...], ...]) -> tuple[ctypes.Array[ctypes.c_char], bool]:
    """The file actions ``wanted``, and whether they are kept (else the caller destroys them after its spawn)."""
    actions = _FILE_ACTIONS.get(wanted)
    if actions is not None:
        return actions, True
    actions = ctypes.create_string_buffer(_ACTIONS_SIZE)
    _check(libc.posix_spawn_file_actions_init(actions))
    try:
        for action in wanted:
            _add(libc, actions, action)
    except BaseException:
        libc.posix_spawn_file_actions_destroy(actions)
        raise
    if len(_FILE_ACTIONS) >= KEPT_ACTIONS:
        return actions, False
    kept = _FILE_ACTIONS.setdefault(wanted, actions)
    if kept is not actions:  # another thread kept the same ones first
        libc.posix_spawn_file_actions_destroy(actions)
    return kept, True


def _address(strings: tuple[object, array.array[int]]) -> int:
    return strings[1].buffer_info()[0]


#: Spawn attributes by (setsid, signals to default): made once, only read by each spawn (from any thread).
_ATTRIBUTES: dict[tuple[bool, tuple[int, ...]], ctypes.Array[ctypes.c_char]] = {}


def _attributes(libc: Any, setsid: bool, setsigdef: tuple[int, ...]) -> ctypes.Array[ctypes.c_char]:
    attr = _ATTRIBUTES.get((setsid, setsigdef))
    if attr is None:
        attr = ctypes.create_string_buffer(_ATTR_SIZE)
        _check(libc.posix_spawnattr_init(attr))
        _settle_attributes(libc, attr, setsid, setsigdef)
        attr = _ATTRIBUTES.setdefault((setsid, setsigdef), attr)  # kept for the process's life, never destroyed
    return attr


def _add(libc: Any, actions: ctypes.Array[ctypes.c_char], action: tuple[int, ...]) -> None:
    kind = action[0]
    if kind == os.POSIX_SPAWN_DUP2:
        _check(libc.posix_spawn_file_actions_adddup2(actions, action[1], action[2]))
    elif kind == os.POSIX_SPAWN_CLOSE:
        _check(libc.posix_spawn_file_actions_addclose(actions, action[1]))
    elif kind == CLOSE_FROM:
        _check(libc.posix_spawn_file_actions_addclosefrom_np(actions, action[1]))
    else:
        raise ValueError(f"unsupported file action {action!r}")


def _settle_attributes(libc: Any, attr: ctypes.Array[ctypes.c_char], setsid: bool, setsigdef: Sequence[int]) -> None:
    flags = _SETSID if setsid else 0
    if setsigdef:
        signals = ctypes.create_string_buffer(_SIGSET_SIZE)
        _check(libc.sigemptyset(signals))
        for sig in setsigdef:
            if libc.sigaddset(signals, int(sig)):
                raise ValueError(f"signal number {int(sig)} out of range")
        _check(libc.posix_spawnattr_setsigdefault(attr, signals))
        flags |= _SETSIGDEF
    _check(libc.posix_spawnattr_setflags(attr, flags))


def _posix_spawn(path: str, argv: Sequence[str], env: Mapping[str, str], **options: Any) -> int:
    """As ``os.posix_spawn``, the GIL dropped while the child starts; also takes ``(CLOSE_FROM, fd)``."""
    return _start(False, path, argv, env, **options)


def _posix_spawnp(path: str, argv: Sequence[str], env: Mapping[str, str], **options: Any) -> int:
    """As ``os.posix_spawnp`` (this process's PATH searched), the GIL dropped while the child starts."""
    return _start(True, path, argv, env, **options)


#: Set on these functions: they take ``(CLOSE_FROM, fd)`` (``functools.wraps`` keeps it on a wrapper).
_posix_spawn.closes_from = True  # type: ignore[attr-defined]
_posix_spawnp.closes_from = True  # type: ignore[attr-defined]

#: The two, or None where the C library lacks what they need.
posix_spawn = _posix_spawn if _LIBC is not None else None
posix_spawnp = _posix_spawnp if _LIBC is not None else None
