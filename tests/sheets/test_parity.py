"""The same gspread script in-process and over real HTTP on 127.0.0.1 gives the same results and the
same store; and the store's snapshot bytes do not depend on the process or its hash seed."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from toolbench.core.transport import ServedApp
from toolbench.mock_services.sheets import create_app, make_client, served_client

from .scenario import digest, fresh, run_script

ROOT = Path(__file__).resolve().parents[2]


def test_served_matches_in_process():
    local_store, local_id = fresh()
    local = run_script(make_client(local_store), local_id)
    served_store, served_id = fresh()
    assert served_id == local_id
    with ServedApp(create_app(served_store)) as served:
        remote = run_script(served_client(served.url), served_id)
    assert remote == local
    assert pickle.dumps(served_store.snapshot()) == pickle.dumps(local_store.snapshot())


def test_served_client_refuses_other_hosts():
    import requests

    client = served_client("http://127.0.0.1:9")
    with pytest.raises(requests.ConnectionError, match="not served"):
        client.http_client.session.get("https://example.com/")


def test_same_script_same_snapshot_bytes():
    first_store, first_id = fresh()
    second_store, second_id = fresh()
    assert digest(run_script(make_client(first_store), first_id), first_store) == digest(
        run_script(make_client(second_store), second_id), second_store
    )


def test_snapshot_bytes_across_processes_and_hash_seeds():
    store, spreadsheet_id = fresh()
    expected = digest(run_script(make_client(store), spreadsheet_id), store)
    for seed in ("0", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
        result = subprocess.run(
            [sys.executable, "-m", "tests.sheets.scenario"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        assert result.stdout.strip() == expected, result.stderr
