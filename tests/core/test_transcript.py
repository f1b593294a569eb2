"""An episode's transcript is bounded: steps after its end add nothing, and long steps are cut."""

import gymnasium as gym

import toolbench
from toolbench.core.env import ACTION_MAX_LENGTH, TRANSCRIPT_MAX_CHARS


def transcript_chars(env) -> int:
    return sum(len(text) for _, text in env.unwrapped._transcript)


def test_steps_after_the_end_add_nothing_to_the_transcript():
    env = gym.make("toolbench/HomeSearch-v0", mode="program")
    task = toolbench.load_tasks("HomeSearch")[0]
    env.reset(options={"task_id": task.id})
    env.step(task.references[0])
    before = (transcript_chars(env), env.unwrapped.render_mode, len(env.unwrapped._transcript))
    for _ in range(50):
        observation, reward, terminated, *_ = env.step("x" * ACTION_MAX_LENGTH)
        assert reward == 0.0 and terminated and "the episode is over" in observation
    assert (transcript_chars(env), env.unwrapped.render_mode, len(env.unwrapped._transcript)) == before


def test_a_long_episode_of_long_actions_keeps_its_transcript_within_the_bound():
    env = gym.make("toolbench/HomeSearch-v0", mode="interactive", max_steps=200)
    env.reset(seed=0)
    for _ in range(60):
        env.step("API." + "x" * (ACTION_MAX_LENGTH - 10))
    assert transcript_chars(env) <= TRANSCRIPT_MAX_CHARS + 200 * 300
    assert "the transcript keeps at most" in env.unwrapped.ansi_transcript()
