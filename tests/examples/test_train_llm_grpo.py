"""The LLM example runs end to end at a tiny size: SFT, a GRPO step in TRL's loop, the held-out
evaluations, and the files it writes."""

import importlib.util
import json
import math
import sys
from pathlib import Path

import pytest

pytest.importorskip("trl", reason="the 'trl' extra is not installed (pip install -e '.[trl]')")

_PATH = Path(__file__).resolve().parents[2] / "examples" / "train_llm_grpo.py"


def _example():
    spec = importlib.util.spec_from_file_location("train_llm_grpo", _PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def test_the_reference_chat_is_what_the_model_must_write_and_renders_as_trl_renders_it():
    example = _example()
    from toolbench.integrations.session import Session, task_rows

    _, tokenizer = example.tiny_model_and_tokenizer()
    rows = task_rows([example.TASK], split="train", size=2, seed=0, modes={example.TASK: "program"})
    (factory,) = example.environment_factory(rows, prompt_setting=example.PROMPT_SETTING).values()
    tools = example.offered_tools(factory)
    methods = [getattr(factory(), t["function"]["name"]) for t in tools]
    session = Session(example.TASK, split="train", mode="program", prompt_setting=example.PROMPT_SETTING)
    chat = example.reference_chat(session, rows[0]["task_id"])  # raises unless the env pays 1
    ids, labels = example.tokenize_chat(tokenizer, chat, tools)
    # The tools as TRL passes them (bound methods) render the same prompt as their schemas.
    prompt = tokenizer.apply_chat_template(chat[:-1], tools=methods, tokenize=False, add_generation_prompt=True)
    first = next(n for n, label in enumerate(labels) if label != -100)
    assert tokenizer.decode(ids[:first]) == prompt
    written = tokenizer.decode([i for i, label in zip(ids, labels, strict=True) if label != -100])
    assert written.startswith("<tool_call>") and written.endswith("</tool_call><|im_end|>\n")
    # What the model is taught to write, played as a model's reply in a fresh episode, earns 1.
    replay = Session(example.TASK, split="train", mode="program", prompt_setting=example.PROMPT_SETTING)
    replay.open(rows[0]["task_id"])
    replay.reply(written)
    assert replay.reward == 1.0


def test_a_tiny_run_writes_finite_numbers_and_the_plot(tmp_path):
    example = _example()
    cfg = example.Config(
        hidden_size=32,
        train_tasks=4,
        sft_steps=3,
        sft_batch=2,
        grpo_steps=1,
        grpo_prompts=2,
        num_generations=2,
        max_completion_length=24,
        eval_tasks=2,
        train_eval_tasks=2,
        eval_batch=2,
        eval_turns=1,
        max_new_tokens=8,
        out_dir=str(tmp_path),
    )
    result = example.run(cfg)
    written = json.loads((tmp_path / "llm_grpo.json").read_text())
    assert written["grpo_step_reward"] == result["grpo_step_reward"] and len(written["grpo_step_reward"]) == 1
    assert (tmp_path / "llm_grpo_curve.png").stat().st_size > 1000
    numbers = [*written["sft_loss"], *written["grpo_step_reward"]]
    for stage in ("before_sft", "after_sft", "after_grpo"):
        for scores in written[stage].values():
            numbers += [scores["reward"], scores["success"]]
    assert len(written["sft_loss"]) == 3 and all(math.isfinite(x) for x in numbers)
    assert written["eval"] == {
        "split": "test",
        "tasks": 2,
        "train_sample": 2,
        "decoding": "greedy",
        "train_sampled": {"temperature": cfg.temperature, "samples_per_task": 8, "turns": 1},
    }
    assert all(written[stage]["train_sampled"]["reward"] >= 0 for stage in ("after_sft", "after_grpo"))
    assert "| after GRPO |" in example.summary(written)
