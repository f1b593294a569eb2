"""Playing an episode in tests."""


def play(env, task_id, actions):
    """Reset on ``task_id`` and step through ``actions`` until the episode ends; the last step's result."""
    env.reset(options={"task_id": task_id})
    for action in actions:
        result = env.step(action)
        if result[2] or result[3]:
            return result
    return result


def assert_the_oracle_solves(env, tasks):
    """The oracle's actions succeed, with reward 1.0, on each of ``tasks``."""
    for task in tasks:
        _, reward, _, _, info = play(env, task.id, env.unwrapped.oracle_actions(task))
        assert info["success"] and reward == 1.0, task.id


def solved_share(env, tasks, solver):
    """The share of ``tasks`` that the one action ``solver(prompt)`` solves."""
    return sum(bool(play(env, t.id, [solver(t.prompt)])[4]["success"]) for t in tasks) / len(tasks)
