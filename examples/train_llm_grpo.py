"""An LLM learns a toolbench env through TRL's own GRPO loop, on CPU, in minutes.

A small Qwen2-shaped model with random weights (``toolbench.integrations.tiny_model``, 2 layers of
width 64; its BPE also trained on the train split's prompts and references, so a city is one
token; nothing is downloaded) plays Home Search: set the criteria the user asks for, then search.

1. SFT warm start: each of 32 train tasks' reference, played in the env (which must pay 1 for it),
   becomes the turn the model must write (a ``<tool_call>`` block), rendered by the tokenizer's
   chat template after the prompt; the loss is on the assistant's tokens only. 300 steps leave
   the greedy train reward short of 1 (about 0.8), so GRPO has something left to raise; 500
   steps reach 1.
2. GRPO: ``ToolbenchGRPOTrainer`` with ``environment_factory`` and ``dataset_rows`` from
   ``toolbench.integrations.trl`` on the same 32 tasks, 40 steps of 4 tasks with 8 rollouts each,
   sampled at temperature 0.5 (at 1.0 a model this small writes few calls that parse; at 0.3 most
   of a task's rollouts are alike, so its group has no spread to learn from), lr 1e-4; each
   rollout's reward is the env's score (partial credit for each criterion set right).
3. Evaluation before SFT, after SFT and after GRPO: greedy decoding, each reply played by
   ``Session.reply`` until the episode ends or the turn cap does, on the test split's 100 tasks
   (never trained on) and on the 32 train tasks; and, on the train tasks, one reply sampled as
   GRPO's rollouts are (temperature 0.5), 8 per task.

The env runs in program mode (one ``submit_program`` call holding the whole program): its prompt
is about 900 tokens, the interactive mode's (15 tool schemas) about 2,500, and on two shared
cores attention over the prompt is most of the cost (``--mode interactive`` runs it). Prompts use
the ``zero`` setting (the API docs and the task) and the tools TRL offers, rendered as TRL renders
them, so SFT, GRPO and the evaluation show the model the same text.

    python examples/train_llm_grpo.py      # writes examples/llm_grpo_curve.png and examples/llm_grpo.json
"""

from __future__ import annotations

import argparse
import ast
import inspect
import json
import math
import os
import random
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # every model and tokenizer here is built locally
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

import torch  # noqa: E402
from datasets import Dataset  # noqa: E402
from transformers import TrainerCallback  # noqa: E402
from transformers.utils import get_json_schema  # noqa: E402
from trl import GRPOConfig  # noqa: E402

import toolbench  # noqa: E402
from toolbench.integrations.session import Limits, Session, task_rows  # noqa: E402
from toolbench.integrations.tiny_model import tiny_model_and_tokenizer  # noqa: E402
from toolbench.integrations.trl import ToolbenchGRPOTrainer, dataset_rows, environment_factory  # noqa: E402

TASK = "HomeSearch"
PROMPT_SETTING = "zero"


@dataclass
class Config:
    """Every knob of a run; the defaults are the run the README reports."""

    seed: int = 0
    mode: str = "program"  # or "interactive": one tool per criterion, a prompt 2.7 times as long
    hidden_size: int = 64
    num_layers: int = 2
    train_tasks: int = 32  # the first ones of a seeded shuffle of the train split
    sft_steps: int = 300
    sft_batch: int = 8
    sft_lr: float = 5e-3
    grpo_steps: int = 40
    grpo_prompts: int = 4  # distinct tasks per GRPO step
    num_generations: int = 8  # rollouts per task (GRPO's group)
    grpo_lr: float = 1e-4
    temperature: float = 0.5
    beta: float = 0.0  # no KL term: no reference model to keep, and TRL's default
    # A rollout's budget for its calls and the tools' answers. The search's answer does not fit
    # after a whole program, so TRL stops the rollout there (the env has already scored it) instead
    # of generating a turn that changes nothing.
    max_completion_length: int = 200
    eval_split: str = "test"
    eval_tasks: int = 100  # the first ones of the split (all of Home Search's test split)
    train_eval_tasks: int = 32  # train tasks scored the same way (all of them by default)
    sampled_per_task: int = 8  # replies sampled at the GRPO temperature per train task, scored too
    eval_batch: int = 25
    eval_turns: int = 2
    max_new_tokens: int = 192
    # One thread: on a shared CPU, a second thread's waits for its peer cost more than it adds
    # (8 times slower SFT steps measured on two cores under a load of 7).
    threads: int = 1
    out_dir: str = str(Path(__file__).parent)
    plot: bool = True


# --------------------------------------------------------------------------- the model's chat
def offered_tools(factory: type) -> list[dict[str, Any]]:
    """The schemas of the tools GRPOTrainer offers for ``factory``'s rollouts, in its order (the
    class's public methods by name) and as the chat template reads them (``get_json_schema``):
    SFT and evaluation render the prompt TRL renders."""
    return [
        get_json_schema(method)
        for name, method in inspect.getmembers(factory, predicate=inspect.isfunction)
        if name not in ("reset", "get_reward") and not name.startswith("_")
    ]


def _literal(node: ast.expr) -> Any:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):  # Loc("X"), Date(m, d, y)
        args = [ast.literal_eval(a) for a in node.args]
        if node.func.id == "Date":
            month, day, year = args
            return f"{year:04d}-{month:02d}-{day:02d}"
        return args[0]
    return ast.literal_eval(node)


def oracle_calls(session: Session) -> list[dict[str, Any]]:
    """The reference of the session's open task as tool calls: in program mode the whole program
    as ``submit_program``'s argument; interactive, one call per step (``API.set_num_beds(2)`` is
    ``set_num_beds`` with ``{"value": 2}``), the arguments named as the tools name them."""
    actions = session.env.oracle_actions(session.env.task)
    if session.mode == "program":
        return [{"name": "submit_program", "arguments": {"program": actions[0]}}]
    params = {t["function"]["name"]: list(t["function"]["parameters"].get("properties", {})) for t in session.tools}
    calls = []
    for action in actions:
        call = ast.parse(action.strip()).body[0].value
        name = call.func.attr
        arguments = dict(zip(params[name], map(_literal, call.args), strict=False))
        arguments.update({k.arg: _literal(k.value) for k in call.keywords})
        calls.append({"name": name, "arguments": arguments})
    return calls


def reference_chat(session: Session, task_id: str) -> list[dict[str, Any]]:
    """The chat of ``task_id`` played by its reference: the opening messages and one assistant
    turn with every call (played in the env, which must pay 1 for it)."""
    messages = session.open(task_id)
    calls = oracle_calls(session)
    for call in calls:
        session.call(call["name"], call["arguments"])
    if session.reward != 1.0:
        raise RuntimeError(f"the reference of {task_id} earns {session.reward}, not 1")
    return [
        *messages,
        {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": c} for c in calls]},
    ]


def tokenize_chat(
    tokenizer: Any, chat: list[dict[str, Any]], tools: list[dict[str, Any]]
) -> tuple[list[int], list[int]]:
    """Token ids of ``chat`` and labels that keep the assistant's tokens only (-100 elsewhere).

    Each message is tokenized as the text it adds to the rendered chat, and the pieces are joined,
    as GRPOTrainer joins a prompt's, a completion's and the tools' answers' ids."""
    ids: list[int] = []
    labels: list[int] = []
    rendered = ""
    for n in range(1, len(chat) + 1):
        nxt = chat[n] if n < len(chat) else None
        if nxt is not None and nxt["role"] != "assistant" and chat[n - 1]["role"] != "assistant":
            continue  # the pieces end where the assistant's turns start and end
        # Up to the next assistant turn's header, so that turn's piece is what the model writes.
        opens = nxt is not None and nxt["role"] == "assistant"
        text = tokenizer.apply_chat_template(chat[:n], tools=tools, tokenize=False, add_generation_prompt=opens)
        if not text.startswith(rendered):
            raise ValueError("the chat template does not render a chat as a prefix of its continuation")
        piece = tokenizer(text[len(rendered) :], add_special_tokens=False)["input_ids"]
        ids += piece
        labels += piece if chat[n - 1]["role"] == "assistant" else [-100] * len(piece)
        rendered = text
    return ids, labels


def tokenizer_texts(task: str) -> list[str]:
    """The train split's prompts and reference calls, for the tokenizer's BPE: a city or a number
    is then one token in a prompt and one in a call, so the model learns to copy it in minutes (as
    pieces of several tokens, it had not after 4,800 examples)."""
    texts = []
    for t in toolbench.load_tasks(task, "train"):
        texts += [t.prompt, *(json.dumps({"program": ref}) for ref in t.references)]
    return texts


# --------------------------------------------------------------------------- SFT
def shared_prefix(examples: Sequence[tuple[list[int], list[int]]]) -> int:
    """How many leading tokens every example shares, none of them a label, less one (so each
    example's first label is predicted from a token of its own part)."""
    first = examples[0][0]
    n = len(first)
    for ids, labels in examples:
        n = min(n, len(ids), next(k for k, label in enumerate(labels) if label != -100))
        while ids[:n] != first[:n]:
            n = next(k for k, (a, b) in enumerate(zip(ids, first)) if a != b)
    return max(0, n - 1)


def sft(
    model: Any,
    examples: Sequence[tuple[list[int], list[int]]],
    steps: int,
    batch: int,
    lr: float,
    seed: int,
    pad_id: int,
) -> list[float]:
    """A plain AdamW loop over ``examples`` (cycled in a seeded order); the loss of every step.

    Every prompt starts with the same tools and API docs: each step runs that shared prefix once
    and the batch's own parts on its cache (the gradient flows through both), a fraction of the
    cost of running every example whole."""
    rng = random.Random(seed)
    order: list[int] = []
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    warmup = max(1, steps // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min(1.0, (s + 1) / warmup) * max(0.1, 1 - s / steps)
    )
    shared = shared_prefix(examples)
    prefix = torch.tensor([examples[0][0][:shared]])
    model.train()
    losses = []
    for _ in range(steps):
        if len(order) < batch:
            more = list(range(len(examples)))
            rng.shuffle(more)
            order += more
        chosen = [(ids[shared:], labels[shared:]) for ids, labels in (examples[i] for i in order[:batch])]
        del order[:batch]
        width = max(len(ids) for ids, _ in chosen)
        input_ids = torch.tensor([ids + [pad_id] * (width - len(ids)) for ids, _ in chosen])
        labels = torch.tensor([lab + [-100] * (width - len(lab)) for _, lab in chosen])
        cache = model(input_ids=prefix, use_cache=True).cache if shared else None
        if cache is not None:
            cache.batch_repeat_interleave(len(chosen))
        # Padding only at the end, under a causal mask, changes no real token: without an attention
        # mask, attention takes its fused causal kernel.
        loss = model(input_ids=input_ids, labels=labels, cache=cache).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        losses.append(loss.item())
    model.eval()
    return losses


# --------------------------------------------------------------------------- evaluation
@torch.no_grad()
def evaluate(
    model: Any,
    tokenizer: Any,
    tools: list[dict[str, Any]],
    task_ids: Sequence[str],
    split: str,
    mode: str,
    turns: int,
    batch: int,
    max_new_tokens: int,
    temperature: float = 0.0,
    seed: int = 0,
) -> dict[str, float]:
    """Mean reward and success on ``task_ids`` (a task listed twice is played twice), decoding
    greedily, or sampling at ``temperature`` (seeded): each reply is played by ``Session.reply``
    (every ``<tool_call>`` of it, as one turn), its answer shown as a tool message, until the
    episode ends or ``turns`` replies have been played."""
    model.eval()
    sampling = {"do_sample": True, "temperature": temperature, "top_k": 0} if temperature > 0 else {"do_sample": False}
    torch.manual_seed(seed)
    limits = Limits(max_turns=turns, max_calls_per_reply=32)  # a reply may hold a task's every call
    results = []
    for start in range(0, len(task_ids), batch):
        sessions = [
            Session(TASK, split=split, mode=mode, prompt_setting=PROMPT_SETTING, limits=limits)
            for _ in task_ids[start : start + batch]
        ]
        chats = [s.open(t) for s, t in zip(sessions, task_ids[start : start + batch])]
        while True:
            live = [n for n, s in enumerate(sessions) if not s.done]
            if not live:
                break
            texts = [
                tokenizer.apply_chat_template(chats[n], tools=tools, tokenize=False, add_generation_prompt=True)
                for n in live
            ]
            encoded = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
            output = model.generate(**encoded, **sampling, max_new_tokens=max_new_tokens)
            replies = tokenizer.batch_decode(output[:, encoded["input_ids"].shape[1] :], skip_special_tokens=True)
            for n, reply in zip(live, replies):
                answer = sessions[n].reply(reply)
                chats[n] += [{"role": "assistant", "content": reply}, {"role": "tool", "content": answer}]
        for s in sessions:
            results.append((s.reward, s.success))
            s.close()
    return {"reward": sum(r for r, _ in results) / len(results), "success": sum(s for _, s in results) / len(results)}


# --------------------------------------------------------------------------- GRPO
class _StepRewards(TrainerCallback):
    """The env's rewards of each GRPO step's rollouts (TRL's log keeps only the last batch)."""

    def __init__(self) -> None:
        self.trainer: Any = None
        self.steps: list[list[float]] = []

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        column = next(iter(self.trainer._logs["rewards"].values()))
        self.steps.append([float(r) for r in list(column)[-args.per_device_train_batch_size :] if not math.isnan(r)])


def grpo(model: Any, tokenizer: Any, rows: list[dict[str, Any]], cfg: Config, work_dir: str) -> list[float]:
    """GRPO in TRL's loop on ``rows``; the mean env reward of each step's rollouts."""
    batch = cfg.grpo_prompts * cfg.num_generations
    args = GRPOConfig(
        output_dir=work_dir,
        use_cpu=True,
        report_to="none",
        max_steps=cfg.grpo_steps,
        per_device_train_batch_size=batch,
        num_generations=cfg.num_generations,
        max_completion_length=cfg.max_completion_length,
        max_tool_calling_iterations=1,  # every reference is one turn of calls
        temperature=cfg.temperature,
        learning_rate=cfg.grpo_lr,
        beta=cfg.beta,
        logging_steps=1,
        save_strategy="no",
        seed=cfg.seed,
        data_seed=cfg.seed,
        dataloader_num_workers=0,
        bf16=False,
        gradient_checkpointing=False,  # recomputing activations saves memory this model does not need
        disable_tqdm=True,
    )
    steps = _StepRewards()
    trainer = ToolbenchGRPOTrainer(
        model=model,
        processing_class=tokenizer,
        args=args,
        train_dataset=Dataset.from_list(dataset_rows(rows, prompt_setting=PROMPT_SETTING)),
        environment_factory=environment_factory(rows, prompt_setting=PROMPT_SETTING),
        callbacks=[steps],
    )
    steps.trainer = trainer
    trainer.train()
    model.eval()
    return [sum(r) / len(r) if r else float("nan") for r in steps.steps]


# --------------------------------------------------------------------------- the run
def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def run(cfg: Config) -> dict[str, Any]:
    """SFT, then GRPO, evaluated on held-out tasks before, between and after; writes the JSON
    (and the PNG when ``cfg.plot``) to ``cfg.out_dir`` and returns what it wrote."""
    started = time.perf_counter()
    random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    model, tokenizer = tiny_model_and_tokenizer(cfg.hidden_size, cfg.num_layers, tokenizer_texts(TASK))
    rows = task_rows([TASK], split="train", size=cfg.train_tasks, seed=cfg.seed, modes={TASK: cfg.mode})
    (factory,) = environment_factory(rows[:1], prompt_setting=PROMPT_SETTING).values()
    tools = offered_tools(factory)
    eval_ids = [t.id for t in toolbench.load_tasks(TASK, cfg.eval_split)][: cfg.eval_tasks]
    probe = rows[: cfg.train_eval_tasks]

    def scores(label: str) -> dict[str, dict[str, float]]:
        t = time.perf_counter()
        out = {
            "held_out": evaluate(
                model,
                tokenizer,
                tools,
                eval_ids,
                cfg.eval_split,
                cfg.mode,
                cfg.eval_turns,
                cfg.eval_batch,
                cfg.max_new_tokens,
            ),
            "train": evaluate(
                model,
                tokenizer,
                tools,
                [r["task_id"] for r in probe],
                "train",
                cfg.mode,
                cfg.eval_turns,
                cfg.eval_batch,
                cfg.max_new_tokens,
            ),
            # What GRPO raises: the reward of a reply sampled as its rollouts are (one reply, at its
            # temperature) on the tasks it trains on, several per task (a step's mean is over 4 tasks
            # only, so noisy). One reply, not the evaluation's two: a second try hides a first's miss.
            "train_sampled": evaluate(
                model,
                tokenizer,
                tools,
                [r["task_id"] for r in probe for _ in range(cfg.sampled_per_task)],
                "train",
                cfg.mode,
                1,
                cfg.eval_batch,
                cfg.max_new_tokens,
                temperature=cfg.temperature,
                seed=cfg.seed,
            ),
        }
        print(
            f"{label}: held-out {out['held_out']}, train sample {out['train']}, "
            f"sampled at temperature {cfg.temperature} {out['train_sampled']} ({time.perf_counter() - t:.0f} s)",
            flush=True,
        )
        return out

    timings: dict[str, float] = {}
    before = scores("before SFT")

    t = time.perf_counter()
    session = Session(TASK, split="train", mode=cfg.mode, prompt_setting=PROMPT_SETTING)
    examples = [tokenize_chat(tokenizer, reference_chat(session, row["task_id"]), tools) for row in rows]
    session.close()
    sft_losses = sft(model, examples, cfg.sft_steps, cfg.sft_batch, cfg.sft_lr, cfg.seed, tokenizer.pad_token_id)
    timings["sft_s"] = time.perf_counter() - t
    print(
        f"SFT: {cfg.sft_steps} steps, loss {sft_losses[0]:.3f} -> {sft_losses[-1]:.3f} ({timings['sft_s']:.0f} s)",
        flush=True,
    )
    after_sft = scores("after SFT")

    t = time.perf_counter()
    with tempfile.TemporaryDirectory() as work_dir:
        step_rewards = grpo(model, tokenizer, rows, cfg, work_dir)
    timings["grpo_s"] = time.perf_counter() - t
    window = max(1, len(step_rewards) // 4)
    first, last = _mean(step_rewards[:window]), _mean(step_rewards[-window:])
    print(
        f"GRPO: {len(step_rewards)} steps, mean rollout reward, first {window} steps {first:.3f} -> "
        f"last {window} {last:.3f} ({timings['grpo_s']:.0f} s)",
        flush=True,
    )
    after_rl = scores("after GRPO")
    timings["total_s"] = time.perf_counter() - started

    result = {
        "config": {k: v for k, v in asdict(cfg).items() if k not in ("out_dir", "plot", "threads")},
        "env": f"{TASK} ({cfg.mode}), prompt setting {PROMPT_SETTING!r}",
        "eval": {
            "split": cfg.eval_split,
            "tasks": len(eval_ids),
            "train_sample": len(probe),
            "decoding": "greedy",
            "train_sampled": {"temperature": cfg.temperature, "samples_per_task": cfg.sampled_per_task, "turns": 1},
        },
        "before_sft": before,
        "after_sft": after_sft,
        "after_grpo": after_rl,
        "sft_loss": sft_losses,
        "grpo_step_reward": step_rewards,
        "grpo_reward_first_last": {"window": window, "first": first, "last": last},
        "timings_s": {k: round(v, 1) for k, v in timings.items()},
    }
    out = Path(cfg.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "llm_grpo.json").write_text(json.dumps(result, indent=1) + "\n")
    if cfg.plot:
        plot(result, out / "llm_grpo_curve.png")
    return result


def plot(result: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(12.5, 3.6))
    left.plot(range(1, len(result["sft_loss"]) + 1), result["sft_loss"])
    left.set_yscale("log")
    left.set_title("SFT on train references: loss (assistant tokens)")
    left.set_xlabel("SFT step")
    left.grid(alpha=0.3)
    rewards = result["grpo_step_reward"]
    steps = range(1, len(rewards) + 1)
    right.plot(steps, rewards, marker=".", alpha=0.5, label="mean rollout reward (train tasks)")
    window = result["grpo_reward_first_last"]["window"]
    if len(rewards) >= window:
        running = [_mean(rewards[n - window : n]) for n in range(window, len(rewards) + 1)]
        right.plot(range(window, len(rewards) + 1), running, color="C0", label=f"its mean over {window} steps")
    for key, style in (("after_sft", ":"), ("after_grpo", "--")):
        stage = key.replace("_", " ")
        right.axhline(result[key]["train"]["reward"], linestyle=style, color="C1", label=f"train greedy, {stage}")
        right.axhline(
            result[key]["train_sampled"]["reward"], linestyle=style, color="C2", label=f"train sampled, {stage}"
        )
        right.axhline(result[key]["held_out"]["reward"], linestyle=style, color="gray", label=f"held-out, {stage}")
    right.set_title(f"GRPO in TRL's loop: {result['env'].split(',')[0]}")
    right.set_xlabel("GRPO step")
    right.set_ylim(-0.02, 1.05)
    right.grid(alpha=0.3)
    right.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def summary(result: dict[str, Any]) -> str:
    rows = [
        ("before SFT", result["before_sft"]),
        ("after SFT", result["after_sft"]),
        ("after GRPO", result["after_grpo"]),
    ]
    ev = result["eval"]
    lines = [
        f"| stage | held-out ({ev['split']}, {ev['tasks']} tasks) reward | success "
        f"| train tasks ({ev['train_sample']}) reward | success "
        f"| train, sampled at temperature {result['config']['temperature']} | success |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, m in rows:
        held, train, sampled = m["held_out"], m["train"], m["train_sampled"]
        lines.append(
            f"| {label} | {held['reward']:.3f} | {held['success']:.2f} "
            f"| {train['reward']:.3f} | {train['success']:.2f} | {sampled['reward']:.3f} | {sampled['success']:.2f} |"
        )
    fl = result["grpo_reward_first_last"]
    lines.append(
        f"GRPO rollout reward: first {fl['window']} steps {fl['first']:.3f}, last {fl['window']} {fl['last']:.3f}"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    defaults = Config()
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for name, value in asdict(defaults).items():
        if name == "plot":
            continue
        parser.add_argument(f"--{name.replace('_', '-')}", type=type(value), default=value)
    parser.add_argument("--no-plot", action="store_true")
    args = vars(parser.parse_args(argv))
    plot_it = not args.pop("no_plot")
    torch.set_num_threads(args["threads"])
    result = run(Config(**args, plot=plot_it))
    print(summary(result))
    print(f"wall time {result['timings_s']['total_s']:.0f} s; numbers in {Path(args['out_dir']) / 'llm_grpo.json'}")


if __name__ == "__main__":
    main()
