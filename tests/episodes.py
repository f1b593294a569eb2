"""Playing an episode in tests."""


def play(env, task_id, actions):
    """Reset on ``task_id`` and step through ``actions`` until the episode ends; the last step's result."""
    env.reset(options={"task_id": task_id})
    for action in actions:
        result = env.step(action)
        if result[2] or result[3]:
            return result
    return result
