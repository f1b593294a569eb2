"""Cheap policies: what a policy under RL finds first if a score can be earned without doing the task.

``toolbench audit`` plays every one on every env and mode it applies to and holds it to a ceiling
(``eval/audit.py``); ``toolbench eval --agent cheap:NAME`` plays one like any other agent, with run
records. None reads the task's own references, except ``paste_responses``, which is handed the
right calls to test whether pasting their raw answers passes; the demonstration and training
policies copy other tasks' answers, as does the ``random`` agent.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any, ClassVar

from toolbench.agents.overlap_buyer import OverlapBuyer
from toolbench.agents.policy_base import ASIN, CheapPolicy, MovesPolicy, instruction_of
from toolbench.core.env import ToolEnv
from toolbench.core.tasks import Task

EMPTY_ANSWER = json.dumps({"name": "Finish", "arguments": {"return_type": "give_answer", "final_answer": ""}})
# What an agent might say to end an episode, across the tasks' own finishing actions.
FINISH_WORDS = (
    "finish", "done", "submit", "Finish", "finish()", "Agent.Done()", "API.search()", "click[buy now]", EMPTY_ANSWER,
)  # fmt: skip
PRICE = re.compile(r"\$(\d+(?:\.\d+)?)")


class EmptyAction(CheapPolicy):
    policy = "empty"
    about = "the empty action, every step"

    def plan(self, env: ToolEnv, task: Task, observation: str, info: dict[str, Any]) -> list[str]:
        return [""]


class GiveUp(CheapPolicy):
    policy = "give_up"
    about = "the task's way to give up at once (its finishing action, or RapidAPI's Finish giving up)"

    def plan(self, env: ToolEnv, task: Task, observation: str, info: dict[str, Any]) -> list[str]:
        return [env.give_up_action()]


class FinishWords(CheapPolicy):
    policy = "finish_words"
    about = "finish, done, submit, Finish... one per step (program: all as the program)"

    def plan(self, env: ToolEnv, task: Task, observation: str, info: dict[str, Any]) -> list[str]:
        return list(FINISH_WORDS)


class EchoInstruction(CheapPolicy):
    policy = "echo"
    about = "the task's prompt sent back as the action"

    def plan(self, env: ToolEnv, task: Task, observation: str, info: dict[str, Any]) -> list[str]:
        return [observation]


class DemoAnswer(CheapPolicy):
    policy = "demo_answer"
    about = "the answer of the demonstration closest to the task (BM25), as a prompt's example shows it"
    #: The splits whose answers the policy copies.
    splits: ClassVar[tuple[str, ...]] = ("demo",)

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self._tasks: dict[str, list[Task]] = {}
        self._matchers: dict[str, Any] = {}

    def applies(self, task: str, mode: str, splits: tuple[str, ...]) -> bool:
        return all(split in splits for split in self.splits)

    def known(self, env: ToolEnv) -> list[Task]:
        """The tasks of the splits whose answers the policy copies, read once per task."""
        if env.task_name not in self._tasks:
            self._tasks[env.task_name] = [t for split in self.splits for t in env.load_split(split)]
        return self._tasks[env.task_name]

    def closest(self, env: ToolEnv, task: Task) -> Task:
        """The known task whose prompt matches ``task``'s best (BM25), completed."""
        from toolbench.prompting import Matcher

        known = self.known(env)
        if env.task_name not in self._matchers:
            self._matchers[env.task_name] = Matcher([other.prompt for other in known])
        (index,) = self._matchers[env.task_name].top_k(task.prompt, 1)
        return env.complete_task(known[index])

    def plan(self, env: ToolEnv, task: Task, observation: str, info: dict[str, Any]) -> list[str]:
        return env.oracle_actions(self.closest(env, task))


class FirstDemoAnswer(DemoAnswer):
    policy = "constant_answer"
    about = "one answer for every task: the first demonstration's"

    def plan(self, env: ToolEnv, task: Task, observation: str, info: dict[str, Any]) -> list[str]:
        return env.oracle_actions(env.complete_task(self.known(env)[0]))


class TrainAnswer(DemoAnswer):
    policy = "train_answer"
    about = "the answer of the training task closest to the task (BM25): what memorizing the train split earns"
    splits = ("train",)


_WORD = re.compile(r"\w+(?:[.'-]\w+)*|[^\w\s]")


def prompt_swaps(old: str, new: str) -> dict[str, str]:
    """Where prompt ``new`` differs from ``old`` word by word: each differing stretch of ``old``
    (and, where both stretches have as many words, each word of it) -> what ``new`` says there."""
    import difflib

    a, b = list(_WORD.finditer(old)), list(_WORD.finditer(new))
    matcher = difflib.SequenceMatcher(None, [m.group() for m in a], [m.group() for m in b], autojunk=False)
    swaps: dict[str, str] = {}
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "replace":
            continue
        swaps.setdefault(old[a[i1].start() : a[i2 - 1].end()], new[b[j1].start() : b[j2 - 1].end()])
        if i2 - i1 == j2 - j1:
            for x, y in zip(a[i1:i2], b[j1:j2]):
                swaps.setdefault(x.group(), y.group())
    return {key: value for key, value in swaps.items() if key != value and (len(key) > 1 or key.isdigit())}


def swapped(text: str, swaps: dict[str, str]) -> str:
    """``text`` with every whole-word occurrence of a key of ``swaps`` (as written, lower-cased or
    URL-encoded) replaced in one pass, longest keys first."""
    from urllib.parse import quote, quote_plus

    table: dict[str, str] = {}
    for key, value in swaps.items():
        for form in (lambda v: v, str.lower, quote_plus, quote):
            table.setdefault(form(key), form(value))
    if not table:
        return text
    keys = sorted(table, key=len, reverse=True)
    pattern = re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, keys)) + r")(?!\w)")
    return pattern.sub(lambda m: table[m.group()], text)


class NearestCopy(DemoAnswer):
    policy = "nearest_copy"
    about = "the closest demo or train task's answer (BM25), with the words where the two prompts differ swapped in"
    splits = ("demo", "train")

    def plan(self, env: ToolEnv, task: Task, observation: str, info: dict[str, Any]) -> list[str]:
        near = self.closest(env, task)
        swaps = prompt_swaps(near.prompt, task.prompt)
        return [swapped(action, swaps) for action in env.oracle_actions(near)]


class RewardSearch(NearestCopy):
    """Hill-climbing on the reward, as an RL optimiser with a private env would: plays the swapped
    answers of the ``width`` closest known tasks on the agent's private copy of the task
    (``clone_for``) and keeps the one its reward liked best. The copy is ungraded, so the search has
    nothing to climb and plays the closest copy; a copy that graded would let it pass."""

    policy = "reward_search"
    about = "the swapped answers of the 5 closest demo or train tasks, tried on the private copy, the best reward kept"
    width = 5

    def plan(self, env: ToolEnv, task: Task, observation: str, info: dict[str, Any]) -> list[str]:
        from toolbench.prompting import Matcher

        known = self.known(env)
        if env.task_name not in self._matchers:
            self._matchers[env.task_name] = Matcher([other.prompt for other in known])
        candidates = []
        for index in self._matchers[env.task_name].top_k(task.prompt, self.width):
            near = env.complete_task(known[index])
            swaps = prompt_swaps(near.prompt, task.prompt)
            candidates.append([swapped(action, swaps) for action in env.oracle_actions(near)])
        private = env.clone_for(task)
        try:
            rewards = [_private_reward(private, task, actions) for actions in candidates]
        finally:
            private.close()
        return candidates[max(range(len(candidates)), key=lambda n: (rewards[n], -n))]


def _private_reward(env: ToolEnv, task: Task, actions: list[str]) -> float:
    """The reward ``actions`` earn on ``env`` (an agent's private copy) in one episode of ``task``."""
    env.reset(options={"task_id": task.id})
    steps = ["\n".join(actions)] if env.mode == "program" else actions or [""]
    total = 0.0
    for action in steps:
        _, reward, terminated, truncated, _ = env.step(action)
        total += reward
        if terminated or truncated:
            return total
    return total


class NamedObjects(CheapPolicy):
    """VirtualHome: find and grab every object the prompt names (as the API calls them, plural or
    with spaces for underscores), in the order it names them; no plan, no world model."""

    policy = "named_objects"
    about = "VirtualHome: Find(x) and, where x can be grabbed, Grab(x) for every object the prompt names"

    def applies(self, task: str, mode: str, splits: tuple[str, ...]) -> bool:
        return task == "VirtualHome"

    def plan(self, env: ToolEnv, task: Task, observation: str, info: dict[str, Any]) -> list[str]:
        from toolbench.mock_services.virtualhome import accepted

        calls = accepted()
        findable, grabbable = calls["Agent.Find"][0], calls["Agent.Grab"][0]
        text = task.prompt.lower()
        named = sorted(
            (found.start(), name)
            for name in findable
            if (found := re.search(rf"\b{re.escape(name.replace('_', ' '))}s?\b", text))
        )
        lines = []
        for _, name in named:
            lines.append(f"Agent.Find({name})")
            if name in grabbable:
                lines.append(f"Agent.Grab({name})")
        return [*(lines or ["Agent.WalkTo(kitchen)"]), *(["Agent.Done()"] if env.mode == "interactive" else [])]


class _WebShopBuyer(CheapPolicy):
    """Search the instruction's words, open one hit of the first page, buy it."""

    def applies(self, task: str, mode: str, splits: tuple[str, ...]) -> bool:
        return task == "WebShop" and mode == "interactive"

    def begin(self, env: ToolEnv, task: Task, observation: str, info: dict[str, Any]) -> None:
        parts = observation.split(" [SEP] ")
        instruction = parts[parts.index("Instruction:") + 1] if "Instruction:" in parts else observation
        self._step, self._query = 0, instruction[:500]

    def act(self, observation: str, info: dict[str, Any]) -> str:
        self._step += 1
        if self._step == 1:
            return f"search[{self._query}]"
        if self._step == 2:
            hits = [c for c in (info.get("available_actions") or {}).get("clickables", []) if ASIN.fullmatch(c)]
            return f"click[{self.choose(hits, observation)}]" if hits else "click[buy now]"
        return "click[buy now]"

    def choose(self, hits: list[str], page: str) -> str:
        raise NotImplementedError


class FirstHit(_WebShopBuyer):
    policy = "first_hit"
    about = "search the instruction, buy the first result"

    def choose(self, hits: list[str], page: str) -> str:
        return hits[0]


class Cheapest(_WebShopBuyer):
    policy = "cheapest"
    about = "search the instruction, buy the cheapest result of the first page"

    def choose(self, hits: list[str], page: str) -> str:
        parts = page.split(" [SEP] ")
        prices = {}
        for index, part in enumerate(parts):
            if part.lower() in hits and index + 2 < len(parts):
                found = PRICE.findall(parts[index + 2])
                prices[part.lower()] = min(float(p) for p in found) if found else float("inf")
        return min(hits, key=lambda hit: (prices.get(hit, float("inf")), hits.index(hit)))


_PRICE_CLAUSES = (
    re.compile(r"price lower than (\d+(?:\.\d+)?) dollars"),
    re.compile(r"(?:under|less than) \$?(\d+(?:\.\d+)?)"),
)
_COLON = re.compile(r"([a-z][a-z ]*?): ([^,]+?)(?=, and |$)")
_TAG = re.compile(r"^\$(\d+(?:\.\d+)?)")


class WebShopGoalParser:
    """Regular expressions over the seen goals' phrasings (WebShop's "name: value" options and price
    clause), and the option values the training goals name."""

    def __init__(self, training: list[Task]) -> None:
        values = {str(v) for task in training for v in (task.get("goal") or {}).get("goal_options", {}).values()}
        self.values = sorted(values, key=len, reverse=True)  # longest first: "navy blue" before "navy"

    def bound(self, instruction: str) -> float | None:
        for pattern in _PRICE_CLAUSES:
            found = pattern.search(instruction)
            if found:
                return float(found.group(1))
        return None

    def options(self, instruction: str) -> list[str]:
        """The option values the instruction names: WebShop's "with name: value, and ..." if it has
        them, else every known value it contains (whole words, longest first, not overlapping)."""
        head = re.split(r",? and price lower than", instruction)[0]
        if " with " in head and _COLON.search(head.split(" with ", 1)[1]):
            return [value.strip() for _, value in _COLON.findall(head.split(" with ", 1)[1])]
        found, rest = [], f" {instruction} "
        for value in self.values:
            pattern = rf"(?<![a-z0-9]){re.escape(value)}(?![a-z0-9])"
            if re.search(pattern, rest):
                found.append(value)
                rest = re.sub(pattern, " | ", rest)
        return found


def result_prices(observation: str, info: dict[str, Any]) -> list[tuple[str, float]]:
    """A WebShop results page's products and their (lowest) prices, in order."""
    parts = observation.split(" [SEP] ")
    asins = [c for c in (info.get("available_actions") or {}).get("clickables", []) if ASIN.fullmatch(c)]
    found = []
    for index, part in enumerate(parts):
        if part.lower() in asins and index + 2 < len(parts):
            tag = _TAG.match(parts[index + 2])
            found.append((part.lower(), float(tag.group(1)) if tag else float("inf")))
    return found


class RuleBuyer(MovesPolicy):
    """WebShop's rule agent, fitted to the demo and train goals: search the instruction, open the hits
    under the price bound in order, buy the first whose option buttons include every option the
    instruction names (clicking them), else the first hit opened."""

    policy = "rule_buyer"
    about = "search the instruction, buy the first hit under the price bound that offers every option it names"
    max_steps = 25

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self._parsers: dict[str, WebShopGoalParser] = {}

    def applies(self, task: str, mode: str, splits: tuple[str, ...]) -> bool:
        return task == "WebShop" and mode == "interactive"

    def begin(self, env: ToolEnv, task: Task, observation: str, info: dict[str, Any]) -> None:
        if env.task_name not in self._parsers:
            self._parsers[env.task_name] = WebShopGoalParser([*env.load_split("demo"), *env.load_split("train")])
        self.start(self.moves(self._parsers[env.task_name], instruction_of(observation)))

    def moves(self, parser: WebShopGoalParser, instruction: str) -> Any:
        """The episode's actions; each ``yield`` gets back the page and info it led to."""
        bound, wanted = parser.bound(instruction), parser.options(instruction)
        observation, info = yield f"search[{instruction}]"
        hits = [(asin, price) for asin, price in result_prices(observation, info) if bound is None or price <= bound]
        steps = 1
        for asin, _ in hits:
            if steps + 2 + len(wanted) >= self.max_steps:
                break
            observation, info = yield f"click[{asin}]"
            steps += 1
            buttons = (info.get("available_actions") or {}).get("clickables", [])
            if all(value in buttons for value in wanted):
                for value in wanted:
                    yield f"click[{value}]"
                yield "click[buy now]"
                return
            yield "click[< prev]"
            steps += 1
        if hits:
            yield f"click[{hits[0][0]}]"
        yield "click[buy now]"


def _env_has_its_own(task: str, method: str) -> bool:
    """Whether ``task``'s env class overrides ``ToolEnv``'s ``method`` (the task offers what it gives)."""
    from toolbench.catalog import find_task

    return getattr(find_task(task).env_class(), method) is not getattr(ToolEnv, method)


class _CallsThenEnd(CheapPolicy):
    """Make some calls, then end with what they returned: for tasks that take a free-text final
    answer (``ToolEnv.answer_action``; RapidAPI's)."""

    def applies(self, task: str, mode: str, splits: tuple[str, ...]) -> bool:
        return _env_has_its_own(task, "answer_action")

    def calls(self, env: ToolEnv, task: Task, info: dict[str, Any]) -> list[str]:
        raise NotImplementedError

    def ending(self, observed: str) -> str:
        raise NotImplementedError

    def begin(self, env: ToolEnv, task: Task, observation: str, info: dict[str, Any]) -> None:
        self._env = env
        self._calls = self.calls(env, task, info)
        self._seen: list[str] = []
        self._started = False

    def answer(self, text: str) -> str:
        """The episode's env's action that ends it with ``text`` as the final answer."""
        return self._env.answer_action(text) or ""

    def give_up(self) -> str:
        return self._env.give_up_action()

    def act(self, observation: str, info: dict[str, Any]) -> str:
        if self._started:  # the first observation is the prompt, not an answer
            self._seen.append(observation)
        self._started = True
        return self._calls.pop(0) if self._calls else self.ending("\n".join(self._seen))


def _is_finish(env: ToolEnv, action: str) -> bool:
    """Whether ``action`` calls the env's finishing function (a JSON call named ``finishing_action``)."""
    try:
        call = json.loads(action)
    except ValueError:
        return False
    return isinstance(call, dict) and call.get("name") == env.finishing_action


class PasteResponses(_CallsThenEnd):
    policy = "paste_responses"
    about = "the right calls (the reference's), then their raw answers pasted as the final answer"

    def calls(self, env: ToolEnv, task: Task, info: dict[str, Any]) -> list[str]:
        return [action for action in env.oracle_actions(task) if not _is_finish(env, action)]

    def ending(self, observed: str) -> str:
        return self.answer(observed)


def _leaves(value: Any, key: str = "") -> list[tuple[str, Any]]:
    if isinstance(value, dict):
        return [leaf for name, item in value.items() for leaf in _leaves(item, str(name))]
    if isinstance(value, list):
        return [leaf for item in value for leaf in _leaves(item, key)]
    return [(key, value)]


def dump_lines(observed: str) -> str:
    """Every field of the JSON the observations hold, as ``key: value`` lines (other text as is)."""
    lines = []
    for line in observed.splitlines():
        try:
            lines += [f"{name}: {value}" for name, value in _leaves(json.loads(line))]
        except ValueError:
            lines.append(line)
    return "\n".join(dict.fromkeys(lines))


class DumpAnswer(PasteResponses):
    policy = "dump_answer"
    about = "the right calls (the reference's), then every field they returned as key: value lines"

    def ending(self, observed: str) -> str:
        return self.answer(dump_lines(observed))


class VerdictReplay(DumpAnswer):
    """Plays the task first on a private copy (a search agent's), answering with the dump, and reads
    every detail the verdict gives beyond passed or failed; gives up in the scored episode when a
    detail says the task cannot be done (``solvable``, or no facts to state), else dumps. What it
    measures is whether a verdict tells more than its reward: trying answers on a private copy and
    keeping the one that passes is a search any env with a reward allows."""

    policy = "verdict_replay"
    about = "a private replay that reads the verdict's details, then gives up where they say unsolvable, else dumps"

    def begin(self, env: ToolEnv, task: Task, observation: str, info: dict[str, Any]) -> None:
        super().begin(env, task, observation, info)
        private = env.clone_for(task)  # ungraded: what the replay reads is the calls' returns
        seen: list[str] = []
        try:
            private.reset(options={"task_id": task.id})
            for action in self._calls:
                seen.append(private.step(action)[0])
            verdict = private.step(self.ending("\n".join(seen)))[4]
        finally:
            private.close()
        details = dict(_leaves(verdict))
        self._give_up = details.get("solvable") is False or details.get("facts_total") == 0

    def ending(self, observed: str) -> str:
        return self.give_up() if getattr(self, "_give_up", False) else super().ending(observed)


class SharedParts(CheapPolicy):
    policy = "shared_parts"
    about = "the task's answer cut down to the parts every task shares, with the task's own values in them"

    def applies(self, task: str, mode: str, splits: tuple[str, ...]) -> bool:
        return _env_has_its_own(task, "shared_parts_actions")

    def plan(self, env: ToolEnv, task: Task, observation: str, info: dict[str, Any]) -> list[str]:
        return env.shared_parts_actions(task) or [""]


class _CallAllTools(_CallsThenEnd):
    """Call every offered tool once with its schema's example values."""

    def calls(self, env: ToolEnv, task: Task, info: dict[str, Any]) -> list[str]:
        made = []
        for tool in info.get("tools") or env.tools() or []:
            function = tool["function"]
            if function["name"] == env.finishing_action:
                continue
            parameters = function.get("parameters", {})
            properties, required = parameters.get("properties", {}), parameters.get("required", [])
            arguments = {
                name: spec.get("example_value", 1 if spec.get("type") in ("integer", "number") else "1")
                for name, spec in properties.items()
                if name in required or "example_value" in spec
            }
            made.append(json.dumps({"name": function["name"], "arguments": arguments}))
        return made


class CallAllGiveUp(_CallAllTools):
    policy = "call_all_give_up"
    about = "every offered tool called with its example values, then give up"

    def ending(self, observed: str) -> str:
        return self.give_up()


class CallAllPaste(_CallAllTools):
    policy = "call_all_paste"
    about = "every offered tool called with its example values, then their raw answers as the final answer"

    def ending(self, observed: str) -> str:
        return self.answer(observed)


class CallEverything(CheapPolicy):
    policy = "call_everything"
    about = "every API of every app, required arguments filled with words of the instruction"

    def applies(self, task: str, mode: str, splits: tuple[str, ...]) -> bool:
        return task == "AppBench"

    def plan(self, env: ToolEnv, task: Task, observation: str, info: dict[str, Any]) -> list[str]:
        from toolbench.mock_services.apps.registry import APP_DESCRIPTIONS, apis

        words = [w for w in re.findall(r"[A-Z][a-z]+", task.prompt)[1:]] or ["1"]
        lines = []
        for number, api in enumerate(apis()):
            args = ", ".join(f"#{name}='{words[number % len(words)]}'" for name, _ in api.required)
            lines.append(f"{api.app}: [{', '.join(api.returns)} = {api.name}({args})]")
        select = [f"select_apps({list(APP_DESCRIPTIONS)!r})"] if getattr(env, "prompting", "") == "hierarchical" else []
        if env.mode == "program":
            return [*select, "\n".join(lines)]
        return [*select, *lines, "finish()"]

    def begin(self, env: ToolEnv, task: Task, observation: str, info: dict[str, Any]) -> None:
        # Not joined into one program: hierarchical program mode takes select_apps, then the plan.
        self._actions = self.plan(env, task, observation, info)


class MismatchSearch(CheapPolicy):
    """Never reads the instruction: reads the worksheet, then writes values found in a cell's own
    column into it, keeping each write that lowers ``info["mismatch_count"]``, for a budget of
    episodes on a private copy of the env; the scored episode plays the writes it kept."""

    policy = "mismatch_search"
    about = "a search guided by the count of wrong cells, 20 episodes per task"
    budget = 20

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self._private: dict[tuple[str, str], ToolEnv] = {}

    def applies(self, task: str, mode: str, splits: tuple[str, ...]) -> bool:
        return task == "GoogleSheets"

    def plan(self, env: ToolEnv, task: Task, observation: str, info: dict[str, Any]) -> list[str]:
        key = (env.task_name, env.mode)
        if key not in self._private:
            self._private[key] = type(env)(tasks=env.tasks, mode=env.mode)
        private = self._private[key]
        seen, _ = self._episode(private, task, "print(worksheet.get_all_values())")
        try:
            rows = ast.literal_eval(seen.strip())
        except (ValueError, SyntaxError):
            rows = []
        kept: list[str] = []
        _, best = self._episode(private, task, "")
        for row, column, value in self._candidates(rows):
            if best == 0 or self._spent >= self.budget:
                break
            write = f"worksheet.update_cell({row}, {column}, {value!r})"
            _, count = self._episode(private, task, "\n".join([*kept, write]))
            if count < best:
                kept, best = [*kept, write], count
        return ["\n".join(kept) or "x = 0", "submit"] if env.mode == "interactive" else ["\n".join(kept) or "x = 0"]

    def begin(self, env: ToolEnv, task: Task, observation: str, info: dict[str, Any]) -> None:
        self._spent = 0
        self._actions = self.plan(env, task, observation, info)

    def _episode(self, env: ToolEnv, task: Task, code: str) -> tuple[str, int]:
        """One private episode of ``code``: its first observation and the count of wrong cells."""
        self._spent += 1
        env.reset(options={"task_id": task.id})
        observation, _, terminated, truncated, info = env.step(code or "x = 0")
        if not (terminated or truncated):
            _, _, _, _, info = env.step("submit")
        return observation, int(info.get("mismatch_count", 1 << 30))

    @staticmethod
    def _candidates(rows: list[list[str]]) -> list[tuple[int, int, str]]:
        found = []
        for r, row in enumerate(rows[1:], start=2):
            for c, value in enumerate(row, start=1):
                column = list(dict.fromkeys(other[c - 1] for other in rows[1:] if len(other) >= c))
                found += [(r, c, other) for other in column if other != value][:3]
        return found


POLICIES: dict[str, type[CheapPolicy]] = {
    policy.policy: policy
    for policy in (
        EmptyAction, GiveUp, FinishWords, EchoInstruction, FirstDemoAnswer, DemoAnswer, TrainAnswer, NearestCopy,
        RewardSearch, NamedObjects,
        FirstHit, Cheapest, RuleBuyer, OverlapBuyer,
        PasteResponses, DumpAnswer, VerdictReplay, SharedParts, CallAllGiveUp, CallAllPaste, CallEverything,
        MismatchSearch,
    )
}  # fmt: skip


def cheap_policy(name: str, seed: int = 0) -> CheapPolicy:
    if name not in POLICIES:
        raise ValueError(f"unknown cheap policy {name!r}: one of {', '.join(POLICIES)}")
    return POLICIES[name](seed)
