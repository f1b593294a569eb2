"""toolbench/WebShop-v0: find and buy the product an instruction describes, on a local shopping site."""

from __future__ import annotations

import json
import re
import warnings
from functools import cache, partial
from pathlib import Path
from typing import Any

from toolbench.core import store
from toolbench.core.env import ActionError, AuditAllowance, Outcome, ToolEnv
from toolbench.core.tasks import Task, TaskSet, fixture_file, read_records
from toolbench.core.toolcalls import ToolCallError, is_json_action, parse_tool_call, unfenced
from toolbench.mock_services.webshop import generate
from toolbench.mock_services.webshop.app import create_app, render_page
from toolbench.mock_services.webshop.catalog import Product, read_product_files
from toolbench.mock_services.webshop.goals import reference, synthetic_goals
from toolbench.mock_services.webshop.human_goals import (
    HumanGoalReport,
    human_goals_from,
    is_human_goal_file,
    read_human_goal_file,
)
from toolbench.mock_services.webshop.reward import Goal, LexiconNouns, Nouns, Reward, spacy_nouns
from toolbench.mock_services.webshop.shop import SCORE_LABEL, InvalidAction, Page, Session, Shop, search_page_text

OBSERVATION_MODES = ("text", "text_rich", "html")
SHIPPED_PRODUCTS = 1000
PRODUCTS_FILE, ATTRIBUTES_FILE = "items_shuffle_1000.json", "items_ins_v2_1000.json"
MAX_PROGRAM_ACTIONS = 200  # a WebShop episode takes about 15 actions; ToolBench allows 25
# r_option is in info too: None without goal options
#: What a private copy's done page says in place of the score.
NOT_GRADED = "(not graded in a private copy)"
METRICS = ("reward", "r_type", "r_att", "r_price", "full_match", "paper_success")

API_DOCS = """# Search the shop for a text query; from any page, go to the results page listing the products the search engine returns.
search[{query}]

# On the current page, click a button with text 'button_text': the lower-cased text between '[button]' and '[button_]' (a product's id, an option value, 'next >', '< prev', 'description', 'buy now', 'back to search', ...). Click one button per action.
click[button_text]"""  # noqa: E501

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "search",
            "description": "Search the shop for a text query (works from any page).",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string", "description": "the words to search for"}},
                "required": ["query"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "click",
            "description": "Click a button of the current page: a product id, an option value, 'next >', "
            "'< prev', 'description', 'features', 'reviews', 'buy now' or 'back to search'.",
            "parameters": {
                "type": "object",
                "properties": {"button": {"type": "string", "description": "the button's text"}},
                "required": ["button"],
            },
        },
    },
]


@cache
def shipped_products(limit: int | None = None) -> tuple[Product, ...]:
    return tuple(
        read_product_files(fixture_file("webshop", PRODUCTS_FILE), fixture_file("webshop", ATTRIBUTES_FILE), limit)
    )


@cache
def _generated_products(count: int) -> tuple[Product, ...]:
    """The shipped catalog and, past it, generated families up to ``count`` products."""
    return (*shipped_products(), *generate.products(count, start=SHIPPED_PRODUCTS))


def _shop(source: tuple[Any, ...], show_attrs: bool, noun_tagger: str, reviews: bool) -> Shop:
    """The shop of a catalog, built once per process for every env that uses it. A user's product
    files are named by their store keys (resolved path, modification time, size), so an edited
    file makes a new shop, and that shop is kept while an env uses it."""
    key = ("webshop-shop", source, show_attrs, noun_tagger, reviews)
    build = partial(_build_shop, source, show_attrs, noun_tagger, reviews)
    return store.held(key, build) if source[0] == "files" else store.shared(key, build)


def _build_shop(source: tuple[Any, ...], show_attrs: bool, noun_tagger: str, reviews: bool) -> Shop:
    kind, *args = source
    if kind == "files":
        products_key, attributes_key, limit = args
        products: Any = read_product_files(products_key[0], attributes_key and attributes_key[0], limit)
    elif kind == "generated":
        products = _generated_products(args[0])
    else:
        products = shipped_products(args[0])
    nouns: Nouns = spacy_nouns() if noun_tagger == "spacy" else LexiconNouns(generate.noun_lexicon())
    return Shop(products, show_attrs=show_attrs, nouns=nouns, show_reviews=reviews)


@cache
def _shipped_goals() -> dict[int, dict[str, Any]]:
    """Every shipped goal by session number (test 0-99, demo, train, unseen), for ToolBench's records,
    which name a goal by its session number only."""
    records = [
        r
        for split in ("test", "demo", "train", "unseen")
        for r in read_records(fixture_file("webshop", f"{split}.jsonl"))
    ]
    return {int(r["session"]): r["goal"] for r in records}


def _referenced(task: Task, shop: Shop) -> Task:
    """``task`` with its reference played in ``shop`` (a smaller catalog ranks its product elsewhere)."""
    actions = reference(shop, task.get("goal"))
    return Task(task.id, task.prompt, ("\n".join(actions),) if actions else (), task.category, task.extra)


def goal_tasks(goals: list[dict[str, Any]], kind: str) -> list[Task]:
    """Tasks from goals in session order (no reference: a user's goals come without expert actions)."""
    return [
        Task(
            f"webshop-{kind}-{n:04d}",
            search_page_text(goal["instruction_text"]),
            (),
            goal["category"],
            {"session": n, "goal": goal},
        )
        for n, goal in enumerate(goals)
    ]


def human_goal_tasks(shop: Shop, path: str | Path) -> tuple[list[Task], HumanGoalReport]:
    """Tasks from a WebShop human goal file (``items_human_ins.json`` or ``human_goals.json``) over ``shop``'s
    products (session = place in the goal list), and what became of each instruction."""
    goals, report = human_goals_from(shop.products, read_human_goal_file(path))
    return goal_tasks(goals, "human"), report


def _goal_task_set(tasks: list[Task], report: HumanGoalReport) -> tuple[TaskSet, HumanGoalReport]:
    return TaskSet.of(tasks), report


def own_score(parts: Reward) -> float:
    """Our score of a purchase: the product of what it got right of each part of the goal (the product
    type factor, the share of wanted attributes, the share of named options, the price within the bound).
    WebShop's reward (``info["reward"]``) adds the parts instead, so a purchase of any listing of the right
    type under the bound, with no option chosen, earns a third to a half of it; this pays nothing for that."""
    attributes = parts.r_att if parts.attributes_total else 1.0
    options = parts.r_option if parts.r_option is not None else 1.0
    return parts.r_type * attributes * options * float(parts.r_price)


def tool_call(action: str) -> tuple[str, str] | None:
    """``("search", query)`` or ``("click", button)`` for an action that is a JSON tool call, else None."""
    if not is_json_action(action):
        return None
    call = parse_tool_call(unfenced(action))
    key = {"search": "query", "click": "button"}.get(call.name)
    if key is None:
        raise ToolCallError(f"unknown tool {call.name!r}: the tools are search and click")
    value = call.arguments.get(key)
    if not isinstance(value, str):
        raise ToolCallError(f'{call.name} needs a string "{key}" argument')
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # "\ud800" in JSON decodes to a lone surrogate: not text
        raise ToolCallError(f'the "{key}" argument is not valid Unicode text') from None
    return call.name, value


_RULE_BUYER = (
    "a rule agent reads the instruction and the pages (it searches, keeps the price bound, clicks the "
    "option buttons the instruction names), which is part of the task; WebShop's own rule baseline "
    "succeeds on 9.6% of its goals and humans on 59% (Yao et al. 2022), and the catalog's near copies "
    "(one wanted attribute, option or price band off) keep a rule from buying right more often"
)
_OVERLAP_TEST = (
    "test keeps WebShop's human goals, which name the wanted attributes and options in the pages' own "
    "words, so a buyer that counts shared words and clicks the option buttons the instruction names "
    "reads much of it (humans succeed on 59% of WebShop's goals); unseen, which paraphrases them, bounds it"
)
_OVERLAP_UNSEEN = (
    "a listing that shares the most words with an unseen goal is often of the goal's product family "
    "(the type and some attributes right), which the reward pays in part; success stays under 0.10"
)


class WebShopEnv(ToolEnv):
    """Shop for the product an instruction describes: search, open products, pick options, buy.

    ## Description
    WebShop (Yao et al. 2022) as ToolBench evaluates it (Xu et al. 2023, appendix A.7): the agent
    reads an instruction ("i need a high speed usb flash drive that is 32 gb, and price lower than
    50.00 dollars"), searches a shop of 1,000 products, opens products, chooses options and buys.
    The shop is local and deterministic: our own generated catalog in WebShop's record formats,
    BM25 search with Lucene's parameters (``bm25s``), and WebShop's pages and rules. The same shop
    is a website (``toolbench serve webshop``).

    ## Action Space
    Text (``UnicodeText``): ``search[query]`` (from any page) or ``click[button text]`` (a button,
    product id or option value of the current page, lower-cased; not ``search``); also the JSON
    tool calls of ``info["tools"]``. An action that does nothing on the page is an error
    observation that says why, and costs a step. ``mode="program"``: the whole list of actions,
    one per line, played in order.

    ## Observation Space
    Text: the current page. ``observation_mode="text"`` (default, WebShop's simple mode as
    ToolBench evaluates it): the visible strings joined by `` [SEP] ``; ``"text_rich"``: one string
    per line with ``[button] ... [button_]`` markers (ToolBench's demonstrations); ``"html"``: the
    page's HTML. ``info["available_actions"]`` lists the clickable buttons and whether search
    works on the page.

    ## Rewards
    Paid when the agent buys (``click[buy now]``). ``info["reward"]`` is WebShop's reward, (attributes
    matched + options matched + price within the bound) / (attributes + options + 1) times the
    product type factor (1, 0.5, 0.1 or 0), with its parts ``r_type``, ``r_att``, ``r_option``,
    ``r_price``; ``success`` is WebShop's own success, that reward at 1.0 (also ``full_match``), and
    ``paper_success`` a purchase with reward > 0 (ToolBench's criterion in its Table 11, which buying
    the first search hit nearly always meets). The step's reward, ``score``, multiplies the parts
    instead (``own_score``): the type factor times the share of wanted attributes, of named options
    and the price check, so buying any listing of the right type without choosing the options earns
    nothing. Both are 1.0 exactly when the goal is met. ``info`` also has ``asin`` and ``options``.
    No purchase within ``max_steps``: 0.

    ## Starting State
    The search page with the goal's instruction. Goals (``test``: sessions 0 to 99, as ToolBench, in
    WebShop's wording; ``demo``: expert trajectories, and ``train``: other products of the same types,
    worded more ways; ``unseen``: product types and a grammar no other split has) drawn by the seeded
    RNG or named by ``options={"task_id": ...}``. The catalog holds, for each goal, near copies of its
    product that each lack one wanted attribute, one named option value or the price band: the first
    listing that looks right is often one of them.

    ## Episode End
    At ``click[buy now]``, or truncated at ``max_steps`` (default 25, as ToolBench). In program
    mode, after the one action.

    ## Arguments
    ``gym.make("toolbench/WebShop-v0", split="test", mode="interactive", observation_mode="text",
    max_steps=None, num_products=None, products_file=None, attributes_file=None, show_attrs=False,
    noun_tagger="lexicon", human_goals_file=None, reviews=False, human_goals=None, task_file=None)``.
    ``num_products``: the first N products (1 to 1,200,000, the scale of WebShop's full catalog;
    beyond the 1,000 shipped, generated families of originals and near copies; below, the goals whose
    product is among them, each with its reference played in that catalog).
    ``products_file`` and ``attributes_file``: WebShop's ``items_shuffle*.json`` and ``items_ins_v2*.json``.
    ``noun_tagger="spacy"`` tags title nouns with spaCy's ``en_core_web_sm`` as WebShop does (install
    both yourself); the default uses the catalog's noun lexicon. ``task_file``: our JSONL,
    ToolBench's ``test.jsonl`` (``{"id": session}``) or a WebShop human goal file. ``human_goals_file``
    (or ``human_goals``): WebShop's ``items_human_ins.json`` or ``human_goals.json`` (instructions only),
    whose goals become the tasks: by asin where the catalog holds it, else matched by product type and
    attributes; ``env.goal_report`` counts what became of every instruction (a warning says how many are
    not goals). With
    ``products_file`` and no other tasks, WebShop's synthetic goals over that catalog are the tasks,
    in WebShop's order (session n is WebShop's goal n). ``reviews=True`` shows our generated reviews
    and ratings (WebShop never loads its reviews: every product says ``Rating: N.A.``).
    """

    default_max_steps = 25
    metric_names = METRICS
    headline_metric = "reward"  # WebShop's score: its mean reward
    finishing_action = "click[buy now]"
    action_line = r"(?:search|click)\[.*\]"
    # The goal's instruction is on every page; the session number names the task, as in WebShop.
    input_fields = ("session", "goal.instruction_text")
    presentation_options = ("observation_mode",)
    score_details = ("r_option", "query_match", "category_match", "title_score")  # the reward's parts
    generation_max_tokens = 128
    generation_top_k_api = 0
    audit_allowances = (
        # WebShop's own rule baseline (search, buy the first hit) succeeds on 9.6% of its goals (Yao et al.
        # 2022); buying the first hit meets ToolBench's weaker criterion (reward > 0) on nearly every goal, so
        # its success is held tighter than the default.
        AuditAllowance("first_hit", {"success_rate": 0.05}, "WebShop's first-hit baseline, held tighter"),
        AuditAllowance("rule_buyer", {"success_rate": 0.25, "score": 0.60}, _RULE_BUYER),
        AuditAllowance("rule_buyer", {"score": 0.25}, _RULE_BUYER, split="unseen"),
        AuditAllowance("overlap_buyer", {"success_rate": 0.45, "score": 0.70}, _OVERLAP_TEST),
        AuditAllowance("overlap_buyer", {"score": 0.25}, _OVERLAP_UNSEEN, split="unseen"),
    )

    def __init__(
        self,
        observation_mode: str = "text",
        num_products: int | None = None,
        products_file: str | Path | None = None,
        attributes_file: str | Path | None = None,
        show_attrs: bool = False,
        noun_tagger: str = "lexicon",
        human_goals_file: str | Path | None = None,
        reviews: bool = False,
        human_goals: str | Path | None = None,
        **kwargs: Any,
    ) -> None:
        if isinstance(human_goals, bool):
            raise ValueError(
                "human_goals= takes the path of WebShop's items_human_ins.json or human_goals.json (not shipped here)"
            )
        human_goals_file = human_goals_file if human_goals_file is not None else human_goals
        if human_goals_file is None and kwargs.get("task_file") is not None and is_human_goal_file(kwargs["task_file"]):
            human_goals_file = kwargs.pop("task_file")  # WebShop's human goal files are task files too
            kwargs["split"] = Path(human_goals_file).stem
        if observation_mode not in OBSERVATION_MODES:
            raise ValueError(f"observation_mode must be one of {list(OBSERVATION_MODES)}, not {observation_mode!r}")
        if noun_tagger not in ("lexicon", "spacy"):
            raise ValueError(f"noun_tagger must be 'lexicon' or 'spacy', not {noun_tagger!r}")
        if num_products is not None and (
            isinstance(num_products, bool)
            or not isinstance(num_products, int)
            or not 1 <= num_products <= generate.MAX_PRODUCTS
        ):
            raise ValueError(
                f"num_products must be an integer from 1 to {generate.MAX_PRODUCTS:,}, not {num_products!r}"
            )
        if products_file is not None:
            attributes_key = attributes_file and store.file_key(attributes_file)
            source: tuple[Any, ...] = ("files", store.file_key(products_file), attributes_key, num_products)
        elif num_products is not None and num_products > SHIPPED_PRODUCTS:
            source = ("generated", int(num_products))
        else:
            source = ("shipped", num_products)
        shop_options = (source, bool(show_attrs), noun_tagger, bool(reviews))
        self.shop = _shop(*shop_options)
        own_tasks = kwargs.get("tasks") is not None or kwargs.get("task_file") is not None
        #: What became of a human goal file's instructions (None without one).
        self.goal_report: HumanGoalReport | None = None
        if human_goals_file is not None:  # WebShop's human goals: its goals are the tasks
            # Read once per shop and file content while an env plays them.
            key = ("webshop-human-goals", shop_options, store.file_key(human_goals_file))
            shop = self.shop
            self._human_goals = store.held(
                key, lambda: store.Holder(_goal_task_set(*human_goal_tasks(shop, human_goals_file)))
            )
            kwargs["tasks"], self.goal_report = self._human_goals.value
            if self.goal_report.not_matched:  # counted, never dropped unsaid (by every env made with them)
                warnings.warn(f"{human_goals_file}: {self.goal_report.summary()}", stacklevel=2)
            if not kwargs["tasks"].tasks:
                raise ValueError(f"{human_goals_file}: no goals over these products ({self.goal_report.summary()})")
        elif products_file is not None and not own_tasks:  # a user's catalog: WebShop's goals over it
            kwargs["tasks"] = goal_tasks(synthetic_goals(self.shop.products), "synthetic")
            if not kwargs["tasks"]:
                raise ValueError(
                    "no goals over these products: give attributes_file= (its instructions make WebShop's goals), "
                    "human_goals_file= or tasks"
                )
        elif num_products is not None and num_products < SHIPPED_PRODUCTS and not own_tasks:
            # A smaller catalog: the shipped goals whose product it holds (session numbers kept).
            split = kwargs.get("split", "test")
            kwargs["tasks"] = [
                _referenced(t, self.shop) for t in self.load_split(split) if t.get("goal")["asin"] in self.shop.by_asin
            ]
        super().__init__(**kwargs)
        self.observation_mode = observation_mode
        self._session: Session | None = None
        self._page: Page | None = None  # the session's current page, laid out once per change
        self._app: Any = None

    # ------------------------------------------------------------------ tasks
    @classmethod
    def complete_task(cls, task: Task) -> Task:
        """ToolBench's records are ``{"id": session}``: the goal is our shipped goal of that session."""
        if task.get("goal") is not None:
            return task
        try:  # a session the record names: an id made up for a record without one names none
            session = int(task.get("session", task.id))
        except (TypeError, ValueError):
            raise ValueError(
                f"WebShop task {task.id!r} has no goal and names no session (an 'id' or 'session' number)"
            ) from None
        goals = _shipped_goals()
        if session not in goals:
            raise ValueError(f"WebShop has shipped goals for sessions 0 to {max(goals)}; not {session}")
        goal = goals[session]
        extra = {**task.extra, "session": session, "goal": dict(goal)}
        prompt = task.prompt or search_page_text(goal["instruction_text"])
        return Task(task.id, prompt, task.references, task.category, extra)

    @classmethod
    def missing_fields(cls, task: Task) -> list[str]:
        """The goal scores an episode, so a record needs no expert actions (ToolBench's have none)."""
        return [] if task.prompt.strip() else ["prompt"]

    # ------------------------------------------------------------------ episode
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        observation, info = super().reset(seed=seed, options=options)
        info["available_actions"] = self.available_actions()
        return observation, info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        observation, reward, terminated, truncated, info = super().step(action)
        if self._session is not None:
            try:
                info["available_actions"] = self.available_actions()
            except Exception:  # a catalog the page logic cannot show: the step's error says it, not a crash
                info["available_actions"] = {"has_search_bar": True, "clickables": []}
        return observation, reward, terminated, truncated, info

    def _begin(self, task: Task) -> str:
        self._session, self._page = Session(goal=Goal.from_record(task.get("goal") or {})), None
        return self._observation()

    def _act(self, action: str) -> Outcome:
        assert self._session is not None
        if self.mode == "program":
            return self._program(action)
        why = self._apply(action)
        if why is not None:
            return Outcome(f"Invalid action: {why}\n{self._observation()}", done=False, executable=False, error=why)
        return self._purchase() if self._session.page == "done" else Outcome(self._observation(), done=False)

    def _apply(self, action: str) -> str | None:
        """Apply one action (text or JSON tool call) to the session; why it did nothing, or None."""
        assert self._session is not None
        self._page = None  # the action may change the session
        try:
            call = tool_call(action)
            if call is None:
                self.shop.act(self._session, action.strip())
            elif call[0] == "search":
                self.shop.act_search(self._session, call[1])
            else:
                self.shop.act_click(self._session, call[1])
        except (InvalidAction, ToolCallError) as exc:
            return str(exc)
        return None

    def _program(self, text: str) -> Outcome:
        """The actions one per line, played in order; the page is rendered once, at the end."""
        assert self._session is not None
        lines = [line.strip() for line in unfenced(text).splitlines() if line.strip()]
        if not lines:
            raise ActionError("the program is empty: write one action per line, e.g. search[...] then click[...]")
        if len(lines) > MAX_PROGRAM_ACTIONS:
            raise ActionError(f"the program has {len(lines)} actions; the limit is {MAX_PROGRAM_ACTIONS}")
        for number, line in enumerate(lines, start=1):
            why = self._apply(line)
            if why is not None:
                observation = f"line {number}: Invalid action: {why}\n{self._observation()}"
                return Outcome(observation, done=True, executable=False, error=why)
            if self._session.page == "done":
                outcome = self._purchase()
                if number < len(lines):
                    outcome.observation += f"\n({len(lines) - number} actions after the purchase were not played)"
                return outcome
        return Outcome(self._observation() + "\n(no purchase was made)", done=True)

    def _purchase(self) -> Outcome:
        assert self._session is not None and self._session.reward is not None
        parts = self._session.reward
        metrics = {
            **parts.info(),
            "full_match": parts.reward == 1.0,
            # ToolBench's Table 11 criterion, kept to compare with it: buying the first search hit
            # earns it on almost every task, so it is not the headline.
            "paper_success": parts.reward > 0,
            "asin": self._session.asin,
            "options": dict(self._session.options),
        }
        score = own_score(parts)
        return Outcome(self._observation(), done=True, score=score, success=parts.reward == 1.0, metrics=metrics)

    def _ungraded_observation(self, observation: str) -> str:
        # The done page prints the purchase's score, as WebShop's does: a private copy shows none.
        label = re.escape(SCORE_LABEL)
        observation = re.sub(rf"({label}(?: \[SEP\] |\n))[^\n]*", rf"\g<1>{NOT_GRADED}", observation)
        return re.sub(r'(<div class="score" id="reward">)[^<]*', rf"\g<1>{NOT_GRADED}", observation)

    # ------------------------------------------------------------------ observations
    def page(self) -> Page:
        """The current page (the observation and the available actions both read it)."""
        assert self._session is not None
        if self._page is None:
            self._page = self.shop.page(self._session)
        return self._page

    def available_actions(self) -> dict[str, Any]:
        """WebShop's ``get_available_actions``: whether search works here, and what can be clicked."""
        page = self.page()
        return {"has_search_bar": page.has_search_bar, "clickables": list(page.clickables)}

    def _observation(self) -> str:
        if self.observation_mode == "text":
            return self.page().simple()
        if self.observation_mode == "text_rich":
            return self.page().rich()
        return self.html()

    def html(self) -> str:
        """The current page as the site serves it."""
        assert self._session is not None and self.task is not None
        if self._app is None:
            self._app = create_app(self.shop, [self._session.goal])
        with self._app.test_request_context():
            return render_page(self.shop, self._session, f"fixed_{self.task.get('session', 0)}")

    # ------------------------------------------------------------------ contract hooks
    def api_docs(self) -> str:
        return API_DOCS

    def tools(self) -> list[dict[str, Any]] | None:
        return json.loads(json.dumps(TOOLS))

    def oracle_actions(self, task: Task) -> list[str]:
        reference = task.references[0] if task.references else ""
        if self.mode == "program":
            return [reference]
        return [line for line in reference.splitlines() if line.strip()]

    def shared_parts_actions(self, task: Task) -> list[str]:
        """What every goal's answer shares: search (the reference's own query), open a listing (the first
        hit), buy; no option chosen, no listing read."""
        reference = task.references[0].splitlines() if task.references else []
        query = (
            reference[0] if reference and reference[0].startswith("search[") else f"search[{task.get('goal')['query']}]"
        )
        hits = self.shop.engine.search(query[len("search[") : -1])
        actions = [query, *([f"click[{self.shop.products[hits[0]].asin.lower()}]"] if hits else []), "click[buy now]"]
        return ["\n".join(actions)] if self.mode == "program" else actions

    def _get_backend_state(self) -> Any:
        return self._session.snapshot() if self._session is not None else None

    def _set_backend_state(self, state: Any) -> None:
        if self.task is None:  # a snapshot from before the first reset: no session yet, as in a new env
            self._session, self._page = None, None
            return
        self._session, self._page = Session(goal=Goal.from_record(self.task.get("goal") or {})), None
        if state is not None:
            self._session.restore(state)
            if self._session.page == "done":
                self.shop.buy(self._session)
