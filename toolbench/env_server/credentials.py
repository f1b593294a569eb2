"""The server's secrets (the snapshot key, the bearer token), read from files or the environment, never argv.

A command line is readable by every local user (``/proc/PID/cmdline``, ``ps``), so secrets come from:

- a file (``--snapshot-key-file``, ``--token-file``) that only its owner can read or write: a file
  readable or writable by group or others, or owned by another user (who could have chosen its
  content), is refused; a missing one is created, mode 0600, with fresh random content;
- or an environment variable (``TOOLBENCH_SNAPSHOT_KEY``, ``TOOLBENCH_TOKEN``), which only the
  process's own user (and root) can read.

Both are at least 32 bytes: a shorter key or token is refused rather than weakly accepted.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

SNAPSHOT_KEY_ENV = "TOOLBENCH_SNAPSHOT_KEY"
TOKEN_ENV = "TOOLBENCH_TOKEN"
MIN_SECRET_BYTES = 32
MAX_SECRET_BYTES = 4096


class CredentialError(ValueError):
    """A key or token the server refuses to use, and why."""


@dataclass(frozen=True)
class Secret:
    value: bytes
    source: str  # where it came from, for the exposure report (never the value)


def _create_private_file(path: Path, content: bytes) -> None:
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(descriptor, "wb") as file:
        file.write(content)


def read_private_file(path: str | os.PathLike[str], what: str, make: Callable[[], bytes] | None = None) -> bytes:
    """The file's bytes, if only its owner (this process's user) can read or write it; created
    mode 0600 with ``make()`` when it does not exist and ``make`` is given."""
    path = Path(path)
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        if make is None:
            raise CredentialError(f"{what} {path}: no such file") from None
        try:
            _create_private_file(path, make())
        except FileExistsError:  # made by someone else in between: read and check it as any other
            pass
        except OSError as exc:
            raise CredentialError(f"{what} {path}: cannot create it: {exc.strerror}") from None
        return read_private_file(path, what, None)
    except OSError as exc:
        reason = "it is a symbolic link" if exc.errno == errno.ELOOP else exc.strerror
        raise CredentialError(f"{what} {path}: cannot read it: {reason}") from None
    with os.fdopen(descriptor, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise CredentialError(f"{what} {path}: not a regular file")
        if info.st_uid != os.geteuid():
            raise CredentialError(f"{what} {path}: owned by uid {info.st_uid}, not by this user ({os.geteuid()})")
        if info.st_mode & 0o066:
            raise CredentialError(
                f"{what} {path}: readable or writable by group or others (mode {stat.S_IMODE(info.st_mode):04o}); "
                f"chmod 600 {path}"
            )
        content = file.read(MAX_SECRET_BYTES + 1)
    if len(content) > MAX_SECRET_BYTES:
        raise CredentialError(f"{what} {path}: longer than {MAX_SECRET_BYTES} bytes")
    return content


def _check_length(value: bytes, where: str) -> bytes:
    if len(value) < MIN_SECRET_BYTES:
        raise CredentialError(f"{where}: {len(value)} bytes; at least {MIN_SECRET_BYTES} are needed")
    return value


def snapshot_key(key_file: str | os.PathLike[str] | None, environ: Mapping[str, str] = os.environ) -> Secret:
    """The key signing snapshots: the file's bytes, else ``TOOLBENCH_SNAPSHOT_KEY``, else random for this process."""
    if key_file is not None:
        raw = read_private_file(key_file, "snapshot key file", make=lambda: secrets.token_bytes(32))
        return Secret(_check_length(raw, f"snapshot key file {key_file}"), f"file {key_file}")
    from_env = environ.get(SNAPSHOT_KEY_ENV)
    if from_env is not None:
        return Secret(_check_length(from_env.encode(), SNAPSHOT_KEY_ENV), f"environment variable {SNAPSHOT_KEY_ENV}")
    return Secret(secrets.token_bytes(32), "random per process (snapshots restore only on this process)")


def _token_text(raw: bytes, where: str) -> bytes:
    token = raw.strip()
    _check_length(token, where)
    if not all(0x21 <= byte <= 0x7E for byte in token):  # it travels in an HTTP header
        raise CredentialError(f"{where}: a token is visible ASCII characters, without spaces")
    return token


def server_token(token_file: str | os.PathLike[str] | None, environ: Mapping[str, str] = os.environ) -> Secret | None:
    """The bearer token clients must send: the file's text, else ``TOOLBENCH_TOKEN``, else none."""
    if token_file is not None:
        raw = read_private_file(token_file, "token file", make=lambda: secrets.token_urlsafe(32).encode() + b"\n")
        return Secret(_token_text(raw, f"token file {token_file}"), f"file {token_file}")
    from_env = environ.get(TOKEN_ENV)
    if from_env is not None:
        return Secret(_token_text(from_env.encode(), TOKEN_ENV), f"environment variable {TOKEN_ENV}")
    return None
