"""Record the model-reply cache and the baseline run that ``agent-eval.yml`` replays and gates on.

With a real model you record them with ``toolbench eval --llm-cache DIR --out DIR`` (see the
workflow's comments). This repository's copy is recorded from the scripted endpoint of its tests
(``tests/eval/fake_llm.py``: it plays each task's reference and, on a seeded 30% of its replies,
answers wrongly), served at the address the workflow names, so ``make test`` can replay it.

    python examples/ci/record.py      # from the repository's root; rewrites examples/ci/llm-cache and baseline
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
ENDPOINT_PORT = 8765  # the workflow's OPENAI_BASE_URL: part of every cached request's key
MODEL_COMMAND = [
    "eval", "--agent", "openai:scripted", "--task", "HomeSearch", "--prompt", "zero", "--limit", "12",
    "--trials", "2", "--quiet",
]  # fmt: skip


def main() -> int:
    sys.path.insert(0, str(ROOT))
    from tests.eval.fake_llm import FakeModel, serve_fake_model
    from toolbench.cli import main as toolbench

    served = serve_fake_model(FakeModel(fail_rate=0.3, seed=1), port=ENDPOINT_PORT)
    os.environ["OPENAI_BASE_URL"] = f"http://127.0.0.1:{ENDPOINT_PORT}/v1"
    os.environ["OPENAI_API_KEY"] = "none"
    try:
        shutil.rmtree(HERE / "llm-cache", ignore_errors=True)
        shutil.rmtree(HERE / "baseline", ignore_errors=True)
        os.chdir(ROOT)  # the run records its cache and its command as the workflow names them
        command = [*MODEL_COMMAND, "--llm-cache", "examples/ci/llm-cache", "--out", "examples/ci/baseline"]
        sys.argv = ["toolbench", *command]
        return toolbench(command)
    finally:
        served.stop()


if __name__ == "__main__":
    sys.exit(main())
