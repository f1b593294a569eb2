"""Fixtures of the evaluation tests: a scripted model endpoint, and users' task files."""

import json

import pytest

import toolbench

from .fake_llm import FakeModel, serve_fake_model


@pytest.fixture
def model(monkeypatch):
    """A scripted OpenAI-compatible endpoint on loopback, named by OPENAI_BASE_URL."""
    fake = FakeModel()
    served = serve_fake_model(fake)
    monkeypatch.setenv("OPENAI_BASE_URL", f"{served.url}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    yield fake
    served.stop()


def write_task_file(path, task, count, reverse=False):
    """The first ``count`` records of a shipped split as a user's file, without ids (as originals are)."""
    records = [record.to_record() for record in toolbench.load_tasks(task)[:count]]
    for record in records:
        del record["id"]
    if reverse:
        records.reverse()
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path
