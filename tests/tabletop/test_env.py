"""toolbench/Tabletop-v0: oracle, a near miss, hostile code, rendering and the original record shape."""

import json

import gymnasium as gym
import numpy as np
import pytest

import toolbench
from tests.episodes import play
from toolbench.core.sandbox import Limits

ENV_ID = "toolbench/Tabletop-v0"


def test_oracle_solves_the_whole_test_split():
    env = gym.make(ENV_ID)
    tasks = toolbench.load_tasks("Tabletop")
    assert len(tasks) == 105 and sorted({t.category for t in tasks}) == sorted(
        [f"SI_{i}" for i in range(8)] + [f"UI_{i}" for i in range(7)]
    )
    for task in tasks:
        _, reward, terminated, _, info = play(env, task.id, [task.references[0]])
        assert terminated and reward == 1.0 and info["collisions"] == 0, (task.id, info)


def test_oracle_in_interactive_mode_and_the_other_splits():
    for split in ("demo", "train"):
        assert len(toolbench.load_tasks("Tabletop", split)) == {"demo": 8, "train": 1000}[split]
    env = gym.make(ENV_ID, mode="interactive")
    by_type = {}
    for task in toolbench.load_tasks("Tabletop"):
        by_type.setdefault(task.category, task)
    for task in by_type.values():
        obs, reward, terminated, _, info = play(env, task.id, env.unwrapped.oracle_actions(task))
        assert terminated and reward == 1.0 and "Success" in obs


def test_train_holds_seen_types_and_no_test_instruction():
    instruction = lambda task: task.prompt.splitlines()[-1]  # noqa: E731
    asked = {instruction(task) for task in toolbench.load_tasks("Tabletop")}
    train = toolbench.load_tasks("Tabletop", "train")
    assert all(task.category.startswith("SI_") for task in train)
    assert not any(instruction(task) in asked for task in train)


def first(category):
    return next(t for t in toolbench.load_tasks("Tabletop") if t.category == category)


def test_a_block_placed_six_centimetres_off_fails():
    task = first("SI_2")  # every block to a corner or side: the reference moves them there
    place = task.get("configs")["instruction_vars_dict"]["corner_or_side"]
    near_miss = task.references[0].replace(
        "put_first_on_second(block_name, target_pos)",
        "put_first_on_second(block_name, target_pos + (np.array([0.0, -0.06]) if block_name == block_names[-1] "
        "else 0))",
    )
    assert near_miss != task.references[0]
    _, reward, _, _, info = play(gym.make(ENV_ID), task.id, [near_miss])
    assert reward == 0.0 and info["executable"] and not info["success"], (place, info)
    assert play(gym.make(ENV_ID), task.id, [task.references[0]])[1] == 1.0


HOSTILE = [
    "import os\nos.system('touch pwned')",
    "__import__('os')",
    "get_obj_pos.__self__.sim",
    "().__class__.__base__.__subclasses__()",
    "open('pwned', 'w')",
    "np.save('pwned.npy', np.zeros(3))",
    "while True:\n    pass",
    "x = np.zeros((2**33,), dtype=np.uint8)",
    "for i in range(500):\n    put_first_on_second(get_obj_names()[0], 'middle')",
]


@pytest.mark.parametrize("code", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_code_ends_with_an_error_and_the_next_episode_is_clean(code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    env = gym.make(ENV_ID, disable_env_checker=True)
    env.unwrapped.limits = Limits(seconds=3, memory_mb=512)
    task = first("SI_1")
    obs, reward, terminated, _, info = play(env, task.id, [code])
    assert terminated and reward == 0.0 and not info["executable"] and "Error" in obs
    assert list(tmp_path.iterdir()) == []
    obs, info = env.reset(options={"task_id": task.id})
    start = env.unwrapped.get_state()["backend"]["sim"]["poses"]
    layout = task.get("configs")["position_dict"]["block_pos"]
    assert [round(v, 4) for v in start[task.get("configs")["block_list"][0]][:2]] == [
        round(v, 4) for v in layout[0][:2]
    ]
    assert play(env, task.id, [task.references[0]])[1] == 1.0


def test_render_shows_the_blocks():
    env = gym.make(ENV_ID, render_mode="rgb_array")
    task = first("SI_2")
    env.reset(options={"task_id": task.id})
    frame = env.render()
    assert frame.shape == (240, 320, 3) and frame.dtype == np.uint8
    sim = env.unwrapped._sim
    block = task.get("configs")["block_list"][0]
    column, row = (int(round(v)) for v in sim.project(sim.get_obj_pos(block), "front", 320, 240))
    colour = np.array(sim.get_color(block)[:3]) * 255
    patch = frame[max(0, row - 3) : row + 4, max(0, column - 3) : column + 4].reshape(-1, 3).astype(float)
    assert np.min(np.linalg.norm(patch - colour, axis=1)) < 40


def test_original_records_read_and_score(refdata, tmp_path):
    layouts = json.loads(
        (
            refdata / "sambanova_toolbench/extracted/evaluator/code_as_policies_env/initial_envs.VALID_POSITIONS.json"
        ).read_text()
    )
    layout = layouts["(2, 2)"][0]
    record = {  # the upstream record shape: no prompt and no completion
        "tester_id": "SI_3",
        "configs": {
            "block_list": ["blue block", "red block"],
            "bowl_list": ["green bowl", "yellow bowl"],
            "position_dict": layout,
            "instruction": "Put the blocks in the green bowl",
            "instruction_vars_dict": {"bowl": "green bowl"},
        },
    }
    path = tmp_path / "test.jsonl"
    path.write_text(json.dumps(record) + "\n")
    env = gym.make(ENV_ID, task_file=str(path))
    task = env.unwrapped.tasks[0]
    assert task.prompt.endswith("# Put the blocks in the green bowl.") and task.category == "SI_3"
    assert play(env, task.id, [task.references[0]])[1] == 1.0


def test_frames_for_a_gif():
    env = gym.make(ENV_ID).unwrapped
    env.record_frames = True
    task = first("SI_1")
    play(env, task.id, [task.references[0]])
    assert len(env.frames) >= 2 and not np.array_equal(env.frames[0], env.frames[-1])


def test_a_fenced_reply_runs_its_code_and_errors_name_the_reply_lines():
    env = gym.make(ENV_ID)
    task = first("SI_0")
    reply = f"Here is the program:\n```python\n{task.references[0].strip()}\n```\nIt moves the block."
    assert play(env, task.id, [reply])[1] == 1.0
    *_, info = play(env, task.id, ["Sure:\n```python\nx = 1\nput_first_on_second('no such block', 'x')\n```"])
    assert info["error"].startswith("line 4: ")


def test_values_the_api_did_not_foresee_are_the_codes_error():
    env = gym.make("toolbench/Tabletop-v0", mode="interactive")
    env.reset(seed=0)
    observation, reward, *_, info = env.step("print(denormalize_xy([10**400, 1]))")
    assert "OverflowError" in info["error"] and "internal error" not in observation and reward == 0.0
    observation, *_ = env.step("print(get_obj_names())")
    assert "[" in observation  # the env goes on
