"""Secrets come from private files or the environment, never argv, and are long enough."""

from __future__ import annotations

import os

import pytest

from toolbench.cli import main
from toolbench.env_server.credentials import (
    SNAPSHOT_KEY_ENV,
    TOKEN_ENV,
    CredentialError,
    server_token,
    snapshot_key,
)


def test_a_missing_key_file_is_created_private_with_32_random_bytes(tmp_path):
    path = tmp_path / "key"
    secret = snapshot_key(path)
    assert path.read_bytes() == secret.value and len(secret.value) == 32
    assert (os.stat(path).st_mode & 0o777) == 0o600
    assert secret.source == f"file {path}"
    assert snapshot_key(tmp_path / "other").value != secret.value


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o620, 0o602])
def test_a_key_file_others_can_read_or_write_is_refused(tmp_path, mode):
    path = tmp_path / "key"
    path.write_bytes(os.urandom(32))
    path.chmod(mode)
    with pytest.raises(CredentialError, match="readable or writable by group or others"):
        snapshot_key(path)


def test_short_keys_and_tokens_are_refused(tmp_path):
    path = tmp_path / "key"
    path.write_bytes(b"short")
    path.chmod(0o600)
    with pytest.raises(CredentialError, match="5 bytes; at least 32"):
        snapshot_key(path)
    with pytest.raises(CredentialError, match=f"{SNAPSHOT_KEY_ENV}: 6 bytes"):
        snapshot_key(None, {SNAPSHOT_KEY_ENV: "secret"})
    with pytest.raises(CredentialError, match=f"{TOKEN_ENV}: 5 bytes"):
        server_token(None, {TOKEN_ENV: "token"})
    with pytest.raises(CredentialError, match="visible ASCII"):
        server_token(None, {TOKEN_ENV: "a token with spaces in it, long enough for the rule"})


def test_a_symlinked_key_file_is_refused(tmp_path):
    target = tmp_path / "real"
    target.write_bytes(os.urandom(32))
    target.chmod(0o600)
    (tmp_path / "link").symlink_to(target)
    with pytest.raises(CredentialError, match="symbolic link"):
        snapshot_key(tmp_path / "link")


def test_the_environment_gives_a_key_and_a_token_and_none_gives_a_random_key():
    assert snapshot_key(None, {SNAPSHOT_KEY_ENV: "k" * 32}).value == b"k" * 32
    token = server_token(None, {TOKEN_ENV: " " + "t" * 40 + "\n"})
    assert token is not None and token.value == b"t" * 40 and token.source == f"environment variable {TOKEN_ENV}"
    assert server_token(None, {}) is None
    assert snapshot_key(None, {}).source.startswith("random per process")


def test_a_missing_token_file_is_created_with_a_random_token(tmp_path):
    token = server_token(tmp_path / "token", {})
    assert token is not None and len(token.value) >= 32
    assert (tmp_path / "token").read_text().strip().encode() == token.value


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--snapshot-key", "s3cret-value"], "--snapshot-key is not accepted"),
        (["--snapshot-key=s3cret-value"], "--snapshot-key-file PATH"),
        (["--token", "s3cret-value"], "--token-file PATH"),
    ],
)
def test_secrets_on_the_command_line_are_refused_naming_the_replacement(argv, message, capsys):
    assert main(["serve", "env", "--task", "HomeSearch", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "s3cret-value" not in err


def test_a_bad_key_file_stops_the_server_before_it_serves(tmp_path, capsys):
    path = tmp_path / "key"
    path.write_bytes(os.urandom(32))
    path.chmod(0o644)
    assert main(["serve", "env", "--task", "HomeSearch", "--snapshot-key-file", str(path)]) == 2
    assert "readable or writable by group or others" in capsys.readouterr().err
