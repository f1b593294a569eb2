"""REINFORCE on a linear policy over candidate tool calls, on CPU, in a minute.

The policy never sees a task's references: it plays envs made with ``gym.make`` and learns only
from the reward they pay. At each decision the example lists candidate calls built from what the
env shows (the prompt, the tool schemas in ``info["tools"]``, the pages WebShop returns), describes
each candidate by a few sparse features (the words around a number, whether an option's text is in
the instruction, ...), and samples one with a softmax over a linear score. REINFORCE with a running
baseline moves the weights.

- Home Search (interactive): for each setter in ``info["tools"]``, pick a value from the prompt
  (numbers, "a"/"an" as 1, capitalised names, the schema's enum, the home types its description
  lists) or skip it; then ``search``.
- WebShop (interactive): pick a query, then one of the first page's results, then one value per
  option group (or none), then ``buy now``.

Each trains on its train split and is scored on its test split.

The scored tasks are played before and after training with the sampling policy and a fixed seed,
so the start is the untrained (uniform) policy on the same episodes.

    python examples/train_tool_policy.py            # both envs, 3,000 episodes each, writes examples/learning_curve.png
    python examples/train_tool_policy.py --episodes 300 --no-plot
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import gymnasium as gym
import numpy as np

import toolbench  # noqa: F401  (registers the env ids)

Candidates = list[list[str]]  # one list of feature names per candidate


@dataclass
class LinearPolicy:
    """Softmax over candidates, each scored by the sum of its features' weights."""

    lr: float = 0.2
    weights: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    trace: list[tuple[Candidates, int, np.ndarray]] = field(default_factory=list)

    def choose(self, candidates: Candidates, rng: np.random.Generator, greedy: bool = False) -> int:
        logits = np.array([sum(self.weights.get(f, 0.0) for f in feats) for feats in candidates])
        probs = np.exp(logits - logits.max())
        probs /= probs.sum()
        index = int(np.argmax(logits)) if greedy else int(rng.choice(len(candidates), p=probs))
        self.trace.append((candidates, index, probs))
        return index

    def reinforce(self, advantage: float) -> None:
        """The score-function gradient of the episode's choices, scaled by the advantage."""
        for candidates, index, probs in self.trace:
            for feat in candidates[index]:
                self.weights[feat] += self.lr * advantage
            for feats, p in zip(candidates, probs):
                for feat in feats:
                    self.weights[feat] -= self.lr * advantage * p
        self.trace.clear()


# ---------------------------------------------------------------- Home Search
_NUMBER = re.compile(r"\$?\d[\d,]*(?:\.\d+)?|\b(?:a|an)\b", re.IGNORECASE)
_WORD = re.compile(r"[\w$][\w,.$/'-]*")


def _norm(word: str) -> str:
    word = word.lower().strip(".,:;?!")
    return "<num>" if re.fullmatch(r"\$?\d[\d,]*(\.\d+)?(/\w+)?", word) else word


def _context(prompt: str, start: int, end: int, width: int = 3) -> list[str]:
    left = [_norm(w) for w in _WORD.findall(prompt[:start])][-width:]
    right = [_norm(w) for w in _WORD.findall(prompt[end:])][:width]
    feats = [f"L{len(left) - i}:{w}" for i, w in enumerate(left)] + [f"R{i + 1}:{w}" for i, w in enumerate(right)]
    return feats + [f"near:{w}" for w in left + right]


def _numbers(prompt: str) -> list[tuple[float, list[str]]]:
    found = []
    for m in _NUMBER.finditer(prompt):
        text = m.group()
        value = 1.0 if text.lower() in ("a", "an") else float(text.strip("$").replace(",", ""))
        kind = "article" if text.lower() in ("a", "an") else ("dollar" if text.startswith("$") else "plain")
        found.append((value, [f"kind:{kind}", f"float:{value != int(value)}"] + _context(prompt, *m.span())))
    return found


def _names(prompt: str) -> list[tuple[str, list[str]]]:
    found = []
    for m in re.finditer(r"\b[A-Z][a-z]+(?: [A-Z][a-z]+)*", prompt):
        at_start = m.start() == 0 or prompt[: m.start()].rstrip().endswith((".", "?", "!", ":"))
        found.append((m.group(), [f"start:{at_start}"] + _context(prompt, *m.span(), width=1)))
    return found


def _listed_values(description: str) -> list[str]:
    """Capitalised names a tool's description lists after its first colon (e.g. home types)."""
    tail = description.split(":", 1)[1] if ":" in description else ""
    return list(dict.fromkeys(re.findall(r"\b[A-Z][A-Za-z-]*", tail)))


def home_search_episode(env: gym.Env, policy: LinearPolicy, rng: np.random.Generator, task_id: str, greedy: bool):
    prompt, info = env.reset(options={"task_id": task_id})
    words = {_norm(w) for w in _WORD.findall(prompt)}
    lowered = prompt.lower()
    finish = info["tools"][-1]["function"]["name"]
    calls = []
    for tool in info["tools"]:
        fn = tool["function"]
        name, (param, spec) = fn["name"], next(iter(fn["parameters"]["properties"].items()), (None, None))
        if name == finish or param is None:
            continue
        if spec["type"] == "array":  # one include/leave-out choice per listed value
            chosen = []
            for value in _listed_values(fn["description"]):
                present = re.search(rf"\b{re.escape(value.lower())}\b", lowered) is not None
                if policy.choose([[f"{name}|include|present:{present}"], [f"{name}|leave"]], rng, greedy) == 0:
                    chosen.append(value)
            if chosen:
                calls.append({"name": name, "arguments": {param: chosen}})
            continue
        if "enum" in spec:
            options = [(v, [f"{v}|present:{v in words}", f"{v}|bias"]) for v in spec["enum"]]
        elif spec["type"] == "string":
            options = _names(prompt)
        else:
            options = [(int(v) if spec["type"] == "integer" else v, f) for v, f in _numbers(prompt)]
        candidates = [[f"{name}|{f}" for f in feats] for _, feats in options] + [[f"{name}|skip"]]
        pick = policy.choose(candidates, rng, greedy)
        if pick < len(options):
            calls.append({"name": name, "arguments": {param: options[pick][0]}})
    for call in [*calls, {"name": finish, "arguments": {}}]:
        _, reward, terminated, truncated, info = env.step(json.dumps(call))
        if terminated or truncated:
            break
    return float(reward), bool(info["success"])


# ---------------------------------------------------------------- WebShop
def _content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2} - {"and", "with", "for", "the", "need"}


def _bucket(x: float) -> int:
    return min(4, int(x * 5))


def webshop_episode(env: gym.Env, policy: LinearPolicy, rng: np.random.Generator, task_id: str, greedy: bool):
    obs, info = env.reset(options={"task_id": task_id})
    instruction = obs.split("[SEP]")[2].strip()
    wanted = _content_words(instruction)
    budget = re.search(r"price lower than ([\d.]+)", instruction)
    queries = [instruction, re.split(r"\bwith\b|, and price|\band price", instruction)[0]]
    q = policy.choose([["query:full"], ["query:head"]], rng, greedy)
    obs, reward, terminated, truncated, info = env.step(f"search[{queries[q]}]")

    # results: "... [SEP] id [SEP] title [SEP] price [SEP] ..." for every clickable product id
    parts = [p.strip() for p in obs.split("[SEP]")]
    clickables = info["available_actions"]["clickables"]
    items = []
    for i, part in enumerate(parts[:-2]):
        if part.lower() in clickables and re.fullmatch(r"[A-Z0-9]{10}", part):
            title, price = parts[i + 1], re.findall(r"\$([\d.]+)", parts[i + 2])
            overlap = len(wanted & _content_words(title)) / max(1, len(wanted))
            cheap = bool(budget and price and float(price[0]) < float(budget.group(1)))
            items.append((part.lower(), [f"rank:{len(items)}", f"overlap:{_bucket(overlap)}", f"price_ok:{cheap}"]))
    if not items:
        return 0.0, False
    pick = policy.choose([feats for _, feats in items], rng, greedy)
    obs, reward, terminated, truncated, info = env.step(f"click[{items[pick][0]}]")

    # product page: option groups are the non-clickable labels followed by clickable values
    parts = [p.strip() for p in obs.split("[SEP]")]
    clickables = set(info["available_actions"]["clickables"])
    groups: list[list[str]] = []
    for part in parts[parts.index("< Prev") + 1 :] if "< Prev" in parts else []:
        if part.lower() in clickables:
            if groups:
                groups[-1].append(part.lower())
        elif part in ("Description", "Features", "Reviews", "Buy Now"):
            break
        else:
            groups.append([])
    for values in (g for g in groups if g):
        candidates = []
        for pos, value in enumerate(values):
            inside = value in instruction.lower()
            share = len(_content_words(value) & wanted) / max(1, len(_content_words(value)))
            candidates.append([f"opt_in:{inside}", f"opt_share:{_bucket(share)}", f"opt_pos:{min(pos, 3)}"])
        pick = policy.choose([*candidates, ["opt_skip"]], rng, greedy)
        if pick < len(values):
            obs, reward, terminated, truncated, info = env.step(f"click[{values[pick]}]")
    obs, reward, terminated, truncated, info = env.step("click[buy now]")
    return float(reward), bool(info["success"])


# ---------------------------------------------------------------- training loop
Episode = Callable[[gym.Env, LinearPolicy, np.random.Generator, str, bool], tuple[float, bool]]
SETUPS: dict[str, tuple[str, Episode]] = {
    "HomeSearch": ("toolbench/HomeSearch-v0", home_search_episode),
    "WebShop": ("toolbench/WebShop-v0", webshop_episode),
}


def splits(task: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(split, task id) pairs to train on (the train split) and to score on (the test split)."""
    test = [("test", t.id) for t in toolbench.load_tasks(task, "test")]
    return [("train", t.id) for t in toolbench.load_tasks(task, "train")], test


Pairs = list[tuple[str, str]]


def evaluate(
    envs: dict[str, gym.Env], policy: LinearPolicy, episode: Episode, pairs: Pairs, seed: int, greedy: bool = False
):
    rng = np.random.default_rng(seed)
    results = [episode(envs[split], policy, rng, task_id, greedy) for split, task_id in pairs]
    policy.trace.clear()
    return {"reward": float(np.mean([r for r, _ in results])), "success": float(np.mean([s for _, s in results]))}


def train(task: str, episodes: int, eval_every: int, seed: int = 0, lr: float = 0.2) -> dict:
    """Train on ``task``'s training tasks; return the curve on its scored tasks and the start and end scores."""
    env_id, episode = SETUPS[task]
    train_pairs, test_pairs = splits(task)
    envs = {
        split: gym.make(env_id, mode="interactive", split=split) for split in {s for s, _ in train_pairs + test_pairs}
    }
    policy, rng, baseline = LinearPolicy(lr=lr), np.random.default_rng(seed), 0.0
    curve = [(0, evaluate(envs, policy, episode, test_pairs, seed + 1))]
    for n in range(1, episodes + 1):
        split, task_id = train_pairs[int(rng.integers(len(train_pairs)))]
        reward, _ = episode(envs[split], policy, rng, task_id, False)
        policy.reinforce(reward - baseline)
        baseline += 0.05 * (reward - baseline)
        if n % eval_every == 0 or n == episodes:
            curve.append((n, evaluate(envs, policy, episode, test_pairs, seed + 1)))
    return {
        "task": task,
        "train_splits": sorted({s for s, _ in train_pairs}),
        "test_tasks": len(test_pairs),
        "curve": curve,
        "start": curve[0][1],
        "end": curve[-1][1],
        "end_greedy": evaluate(envs, policy, episode, test_pairs, seed + 1, greedy=True),
    }


def plot(runs: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(runs), figsize=(5 * len(runs), 3.6), squeeze=False)
    for ax, run in zip(axes[0], runs):
        steps = [n for n, _ in run["curve"]]
        ax.plot(steps, [m["reward"] for _, m in run["curve"]], label="mean reward")
        ax.plot(steps, [m["success"] for _, m in run["curve"]], label="success rate")
        ax.set_title(f"{run['task']} (interactive): {run['test_tasks']} test tasks")
        ax.set_xlabel(f"training episodes ({' + '.join(run['train_splits'])}; never the scored tasks)")
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--task", choices=sorted(SETUPS), action="append", help="default: both")
    parser.add_argument("--episodes", type=int, default=3000, help="training episodes per env")
    parser.add_argument("--eval-every", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--lr", type=float, default=0.2)
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("learning_curve.png"))
    parser.add_argument("--no-plot", action="store_true")
    args = parser.parse_args(argv)
    runs = []
    for task in args.task or sorted(SETUPS):
        started = time.perf_counter()
        run = train(task, args.episodes, args.eval_every, seed=args.seed, lr=args.lr)
        runs.append(run)
        print(
            f"{task}: {run['test_tasks']} test tasks, sampled policy: success "
            f"{run['start']['success']:.2f} -> {run['end']['success']:.2f}, mean reward "
            f"{run['start']['reward']:.3f} -> {run['end']['reward']:.3f}; greedy at the end: success "
            f"{run['end_greedy']['success']:.2f}, reward {run['end_greedy']['reward']:.3f} "
            f"({args.episodes} episodes, {time.perf_counter() - started:.0f} s)"
        )
    if not args.no_plot:
        plot(runs, args.out)
        print(f"learning curve: {args.out}")


if __name__ == "__main__":
    main()
