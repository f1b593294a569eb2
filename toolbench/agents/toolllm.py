"""ToolLLM's search strategies over ``toolbench/RapidAPI-v0``: ReACT (``CoT@n``) and DFSDT.

Both talk to a model on an OpenAI-compatible endpoint with native function calling (``tools`` and
``tool_calls``). A model that answers in text instead may write ``Action: <function>`` and
``Action Input: {...}`` lines, and these are read as a call.

- **ReACT@N** (``react:MODEL``, ``react@3:MODEL``) runs up to N chains of thought and calls, each
  from the start, and stops at the first chain whose ending passes.
- **DFSDT** (``dfsdt:MODEL``) is ToolBench's ``DFS_woFilter_w2``: a pre-order search of width 2.
  - A chain ends at a final answer, at a give-up, or at the depth limit of 12. Depth counts nodes:
    1 for the model's reply, 2 for each call.
  - Giving up abandons the chain from the step before it, so a new sibling is generated one level
    up. The depth limit backtracks one level.
  - A node's second child is asked for with a diversity note that lists what its first children
    tried.
  - The search stops at the first answer or when the query budget (default 200 model calls) is spent.

Unlike ToolBench, DFSDT backtracks for real: each node keeps the env's state (``get_state``), and a
sibling starts from its parent's restored state, so no branch sees another branch's side effects.
``restore=False`` gives the original behaviour, where the world keeps every side effect.

The search runs on the agent's own copy of the env. The harness's env then replays the chosen
chain, so ``toolbench eval --agent dfsdt:MODEL`` scores the path the search found. The tree is in
the episode log.

The episode's limits (``agent.limits``, an ``EpisodeLimits``) hold over the whole search: every
model call counts towards ``max_turns``, ``max_tokens`` and ``max_cost``, and ``timeout_s`` runs
from the start of the search. A limit reached, or a reply cache's miss, stops the search; the
agent raises it at its first ``act``, where the harness ends the episode with it (the tree so far
is in the log).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from toolbench.agents.base import EpisodeLimits
from toolbench.agents.client import AgentError, ChatClient, EpisodeMeter, LimitReached, ModelTimeout, RunStopped
from toolbench.agents.reply_cache import CacheMiss
from toolbench.core.env import ToolEnv
from toolbench.core.tasks import Task

MAX_DEPTH = 12
WIDTH = 2
QUERY_BUDGET = 200
SYSTEM = (
    "You answer the user's request by calling the functions you are given, one step at a time. Think "
    "briefly, then call a function. When you have the answer, call Finish with return_type give_answer "
    "and the whole answer in final_answer; if the task cannot be done from here, call Finish with "
    "return_type give_up_and_restart. Always end with Finish."
)
DIVERSITY = (
    "This is not your first try from this point. Earlier tries from here called (and got): {tried}. "
    "Choose a different next step from all of them."
)
_ACTION = re.compile(r"Action:\s*(\S+)\s*\nAction Input:\s*(\{.*\})", re.DOTALL)


@dataclass
class Node:
    """One model reply and the calls it made, with the env's state after them."""

    messages: list[dict[str, Any]]
    state: dict[str, Any] | None
    depth: int = 0
    action: str = ""
    observation: str = ""
    terminal: bool = False  # a final answer
    gave_up: bool = False
    codes: list[int] = field(default_factory=list)  # ToolBench's status code of each call
    reply: dict[str, Any] = field(default_factory=dict)  # the model's message that made this node
    cut: bool = False  # the env's step limit ended the chain (backtracks like the depth limit)
    children: list[Node] = field(default_factory=list)

    def toolbench_nodes(self, parent_depth: int) -> dict[str, Any]:
        """This reply as ToolBench's tree nodes: a Thought, then per call an Action and its Action
        Input (with the observation and its status code), the children hanging from the last one."""
        reply = self.reply
        calls = reply.get("tool_calls") or []
        lines = self.observation.splitlines() or [""]
        top = _toolbench_node("Thought", reply.get("content") or "", parent_depth + 1, self)
        tail = top
        for n, call in enumerate(calls):
            action = _toolbench_node("Action", call["function"]["name"], tail["depth"] + 1, self)
            given = _toolbench_node("Action Input", call["function"].get("arguments") or "{}", tail["depth"] + 2, self)
            given["is_terminal"] = self.terminal and call["function"]["name"] == "Finish"
            given["observation"] = lines[n] if n < len(lines) else ""
            given["observation_code"] = self.codes[n] if n < len(self.codes) else 0
            action["children"], action["child_count"] = [given], 1
            tail["children"], tail["child_count"] = [action], 1
            tail = given
        tail["children"] = [child.toolbench_nodes(tail["depth"]) for child in self.children]
        tail["child_count"] = len(tail["children"])
        return top

    def tree(self) -> dict[str, Any]:
        return {
            "depth": self.depth,
            "action": self.action,
            "observation": self.observation[:2000],
            "is_terminal": self.terminal,
            "pruned": self.gave_up,
            "children": [child.tree() for child in self.children],
        }


def _toolbench_node(kind: str, description: str, depth: int, node: Node) -> dict[str, Any]:
    """One node of ToolBench's answer tree (its fields; ``Elo`` and ``io_state`` as it writes them)."""
    return {
        "is_terminal": False,
        "pruned": node.gave_up,
        "finished": False,
        "depth": depth,
        "node_type": kind,
        "description": description,
        "Elo": 1000.0,
        "child_count": 0,
        "expand_num": 0,
        "io_state": {},
        "children": [],
    }


def answer_file(
    root: Node, chosen: Node | None, query: str, tools: list[dict[str, Any]], log: dict[str, Any]
) -> dict[str, Any]:
    """The search as ToolBench's raw answer file (``<query_id>_<method>.json``)."""
    top = {"is_terminal": False, "pruned": False, "finished": False, "depth": 0, "node_type": "Action Input",
           "description": "", "Elo": 1000.0, "io_state": {}, "expand_num": 0}  # fmt: skip
    top["children"] = [child.toolbench_nodes(0) for child in root.children]
    top["child_count"] = len(top["children"])

    def size(node: dict[str, Any]) -> tuple[int, int]:
        counts = [size(child) for child in node["children"]]
        return 1 + sum(c[0] for c in counts), 1 + max((c[1] for c in counts), default=0)

    total, longest = size(top)
    # ToolBench's choice: the first answer; else a give-up (ToolBench picks one at random; we, the first).
    ending = chosen if chosen is not None and chosen.terminal else next(iter(_gave_up(root)), None)
    final = ""
    if ending is not None:
        calls = ending.reply.get("tool_calls") or []
        final = next((c["function"].get("arguments", "") for c in calls if c["function"]["name"] == "Finish"), "")
    finish_type = "" if ending is None else ("give_answer" if ending.terminal else "give_up")
    return {
        "win": bool(ending is not None and ending.terminal),
        "tree": {"size": total, "max_length": longest, "tree": top},
        "forward_args": log.get("forward_args", {}),
        "compare_candidates": [],
        "answer_generation": {
            "valid_data": ending is not None,
            "query_count": log.get("query_count", 0),
            "total_tokens": 0,
            "final_answer": final,
            "finish_type": finish_type,
            "function": tools,
            "chain": [],
            "train_messages": [ending.messages] if ending is not None else [],
            "query": query,
        },
    }


def _gave_up(node: Node) -> list[Node]:
    """The nodes that gave up, in pre-order."""
    return [*([node] if node.gave_up else []), *(n for child in node.children for n in _gave_up(child))]


def reply_to_action(completion: Any) -> tuple[str, dict[str, Any]]:
    """The env action of a model reply (its tool calls), and the assistant message for the history."""
    calls = list(getattr(completion, "tool_calls", []) or [])
    content = getattr(completion, "content", "") or ""
    if not calls:
        match = _ACTION.search(content)  # a model without function calling: ReACT's text format
        if match is None:
            raise AgentError("the model's reply holds no function call")
        calls = [
            {"id": "call_0", "type": "function", "function": {"name": match.group(1), "arguments": match.group(2)}}
        ]
    action = json.dumps(
        [{"name": c["function"]["name"], "arguments": c["function"].get("arguments") or "{}"} for c in calls]
    )
    message = {"role": "assistant", "content": content or None, "tool_calls": calls}
    return action, message


class Search:
    """The search shared by ReACT@N and DFSDT, over one env whose task is set."""

    def __init__(self, client: Any, width: int = WIDTH, max_depth: int = MAX_DEPTH, budget: int = QUERY_BUDGET,
                 restore: bool = True, temperature: float = 0.0,
                 meter: EpisodeMeter | None = None) -> None:  # fmt: skip
        self.client, self.width, self.max_depth, self.budget = client, width, max_depth, budget
        self.restore, self.temperature = restore, temperature
        self.meter = meter if meter is not None else EpisodeMeter()
        self.queries = 0
        self.errors: list[str] = []

    def root(self, env: ToolEnv, observation: str, info: dict[str, Any]) -> Node:
        system = f"{SYSTEM}\n\n{info.get('api_docs', '')}".strip()
        messages = [{"role": "system", "content": system}, {"role": "user", "content": observation}]
        return Node(messages, env.get_state())

    def _expand(self, env: ToolEnv, node: Node, extra: list[dict[str, Any]] | None = None) -> Node | None:
        """One model call from ``node`` and the env step it asks for: the child, or None when the
        reply could not be used (an error step: counted, the search goes on)."""
        if self.queries >= self.budget:
            return None
        if node.state is not None:
            state = node.state
            if not self.restore:  # ToolBench: the conversation goes back, the world keeps every side effect
                state = {**node.state, "backend": env.get_state()["backend"]}
            env.set_state(state)
        timeout = self.meter.before_call(getattr(self.client, "timeout", float("inf")))
        options: dict[str, Any] = {"timeout": timeout} if timeout is not None else {}
        self.queries += 1
        try:
            try:
                completion = self.client.complete(
                    node.messages + (extra or []), env.tools(), temperature=self.temperature, **options
                )
            except ModelTimeout:
                if self.meter.cut:  # the call had only the episode's time left
                    raise self.meter.timed_out() from None
                raise
            self.meter.after_call(completion)
            action, message = reply_to_action(completion)
        except (LimitReached, RunStopped, CacheMiss):  # the episode (or the run) ends, not just this step
            raise
        except AgentError as exc:
            self.errors.append(str(exc))
            return Node(node.messages, node.state, node.depth + 1, observation=f"error: {exc}")
        if self.queries >= self.budget:
            return None  # as ToolBench: the call that reaches the budget aborts the search, its reply unused
        observation, _, terminated, truncated, info = env.step(action)
        tool_messages = [
            {"role": "tool", "tool_call_id": call["id"], "content": line}
            for call, line in zip(message["tool_calls"], observation.splitlines() or [observation], strict=False)
        ]
        child = Node(
            node.messages + [message, *tool_messages],
            env.get_state(),
            node.depth + 1 + 2 * len(message["tool_calls"]),
            action,
            observation,
            terminal=info.get("status_code") == 3,
            gave_up=info.get("status_code") == 4,
            cut=truncated and not terminated,
            codes=list(info.get("status_codes") or [info.get("status_code", 0)]),
            reply=message,
        )
        node.children.append(child)
        return child

    def chain(self, env: ToolEnv, root: Node) -> Node:
        """One ReACT chain from ``root``: expand the last node until it ends. Returns the last node."""
        node = root
        while not (node.terminal or node.gave_up or node.cut) and node.depth < self.max_depth:
            child = self._expand(env, node)
            if child is None or child is node or not child.action:
                return child or node
            node = child
        return node

    def dfs(self, env: ToolEnv, node: Node, found: list[Node]) -> int:
        """ToolBench's DFS: how many levels to go back (2 after an answer or a give-up, 1 at the depth limit)."""
        if node.terminal:
            found.append(node)
            return 2
        if node.gave_up:
            return 2
        if node.depth >= self.max_depth or node.cut:
            return 1
        for _ in range(self.width):
            extra = None
            if node.children:  # ask for something new: say what the earlier children tried
                tried = "; ".join(
                    f"{child.action[:300]} -> {child.observation[:300]}" for child in node.children if child.action
                )
                extra = [{"role": "user", "content": DIVERSITY.format(tried=tried or "nothing usable")}]
            child = self._expand(env, node, extra)
            if child is None:
                return 100_000  # the query budget is spent: stop everything
            if not child.action:
                continue  # an error step: try another sibling
            back = self.dfs(env, child, found)
            if found:
                return 10_000
            if back > 1:
                return back - 1
        return 1


def path_to(root: Node, target: Node) -> list[str]:
    """The actions from the root down to ``target``."""

    def walk(node: Node, path: list[str]) -> list[str] | None:
        if node is target:
            return path
        for child in node.children:
            found = walk(child, [*path, child.action])
            if found is not None:
                return found
        return None

    return walk(root, []) or []


def deepest_end(root: Node) -> Node:
    """The last node of the first chain (what is played when nothing was found)."""
    node = root
    while node.children:
        node = node.children[0]
    return node


class ToolLLMAgent:
    """ReACT@N or DFSDT as a harness agent: the search runs on a copy of the env in ``begin``, and
    ``act`` replays the chosen chain on the harness's env."""

    trial = 0  # which of the task's trials is played (set by the harness before ``begin``)
    limits = EpisodeLimits()  # the episode's limits over the whole search (set by the harness before ``begin``)

    def __init__(self, model: str, method: str = "dfsdt", tries: int = 1, client: Any = None, **search: Any) -> None:
        if method not in ("react", "dfsdt"):
            raise ValueError(f"method must be react or dfsdt, not {method!r}")
        self.name = f"{method}{f'@{tries}' if method == 'react' and tries > 1 else ''}:{model}"
        self.method, self.tries, self.search_options = method, tries, search
        self.client = client if client is not None else ChatClient(model)
        self._actions: list[str] = []
        self._log: dict[str, Any] = {}
        self._stopped: AgentError | None = None

    def solve(self, env: ToolEnv, task: Task | None = None) -> tuple[list[str], dict[str, Any]]:
        """Search ``task`` (default: the env's current task, else its first) on ``env``, which this
        call resets; the chain to play and the search's log (its tree and ToolBench's answer file).
        The search is one episode of trial ``self.trial`` within ``self.limits``: a limit reached
        (``LimitReached``) or a replay's miss (``CacheMiss``) is raised."""
        actions, log, stopped = self._search(env, task)
        if stopped is not None:
            raise stopped
        return actions, log

    def _search(self, env: ToolEnv, task: Task | None) -> tuple[list[str], dict[str, Any], AgentError | None]:
        task = task or env.task or env.tasks[0]
        if hasattr(self.client, "start_episode"):
            self.client.start_episode(self.trial)
        search = Search(self.client, **self.search_options, meter=EpisodeMeter(self.limits))
        observation, info = env.reset(options={"task_id": task.id})
        root = search.root(env, observation, info)
        chosen: Node | None = None
        stopped: AgentError | None = None
        try:
            if self.method == "dfsdt":
                found: list[Node] = []
                search.dfs(env, root, found)
                chosen = found[0] if found else None
            else:
                for _ in range(self.tries):  # a new chain only after one that gave up or ran out
                    end = search.chain(env, root)
                    if end.terminal:
                        chosen = end
                        break
        except RunStopped:
            raise
        except AgentError as exc:  # a limit or a replay's miss: the search stops, its tree so far is logged
            stopped = exc
        end = chosen or deepest_end(root)
        forward = {"single_chain_max_step": search.max_depth, "tree_beam_size": search.width,
                   "max_query_count": search.budget, "answer": 1, "with_filter": False}  # fmt: skip
        log = {"method": self.name, "query_count": search.queries, "errors": search.errors, "tree": root.tree(),
               "forward_args": forward, **search.meter.to_json()}  # fmt: skip
        if stopped is not None:
            log["stopped"] = {"kind": stopped.kind, "reason": str(stopped)}
        log["answer_file"] = answer_file(root, chosen, task.prompt, env.tools() or [], log)
        return [a for a in path_to(root, end) if a], log, stopped

    def begin(self, env: ToolEnv, task: Task, observation: str, info: dict[str, Any]) -> None:
        private = env.clone_for(task)  # the episode's settings (cache, retriever, ...), ungraded
        try:
            # A search stopped by a limit or a miss ends the episode at the first act, where the
            # harness reads an agent's errors.
            self._actions, self._log, self._stopped = self._search(private, task)
        finally:
            private.close()

    def act(self, observation: str, info: dict[str, Any]) -> str:
        if self._stopped is not None:
            stopped, self._stopped = self._stopped, None
            raise stopped
        if not self._actions:  # nothing found: end the episode by giving up
            return json.dumps({"name": "Finish", "arguments": {"return_type": "give_up_and_restart"}})
        return self._actions.pop(0)

    def episode_log(self) -> dict[str, Any]:
        return self._log


def DFSDT(model: str, client: Any = None, **search: Any) -> ToolLLMAgent:  # noqa: N802  (the method's name)
    """ToolBench's DFSDT (``DFS_woFilter_w2``): ``DFSDT("gpt-4o-mini").solve(env)``."""
    return ToolLLMAgent(model, "dfsdt", client=client, **search)


def ReACT(model: str, tries: int = 1, client: Any = None, **search: Any) -> ToolLLMAgent:  # noqa: N802
    """ToolBench's ReACT (``CoT@n``) with ``tries`` chains: ``ReACT("gpt-4o-mini", tries=3).solve(env)``."""
    return ToolLLMAgent(model, "react", tries, client=client, **search)
