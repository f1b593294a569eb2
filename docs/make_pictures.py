"""Make the env pages' pictures: ``python docs/make_pictures.py`` writes ``docs/images/<task>.png``.

Each picture shows one test episode of the env, played by the oracle through the env's own API:

- Tabletop: the front camera (``render_mode="rgb_array"``) before and after the oracle's program;
- WebShop: the shop's results page, a headless Chromium's screenshot of ``toolbench serve webshop``
  (Debian's ``chromium``); without Chromium, the same page's text as the env observes it;
- VirtualHome: the program beside the task's home, drawn as a graph of rooms and what is in or on what;
- Google Sheets: the worksheet before and after the oracle's code, read back through the env;
- every other env: the task, the action and what the env answered, as an episode card.

The pictures are deterministic in content (the same episodes every run); ``tests/test_docs.py``
checks that every env page shows one that exists. ``--only Tabletop WebShop`` remakes some of them.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import matplotlib

matplotlib.use("Agg")  # files only, no display
import gymnasium as gym  # noqa: E402 - after choosing matplotlib's backend
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyBboxPatch  # noqa: E402

import toolbench  # noqa: E402

IMAGES = Path(__file__).resolve().parent / "images"
#: The episode each picture plays (a test task), chosen for a picture that shows the task well.
EPISODES = {
    "OpenWeather": "openweather-test-0085",
    "CatAPI": "catapi-test-0085",
    "HomeSearch": "home_search-test-0085",
    "TripBooking": "trip_booking-test-0102",
    "GoogleSheets": "sheets-test-0059",
    "Tabletop": "tabletop-test-0007",
    "VirtualHome": "virtualhome-test-0004",
    "WebShop": "webshop-test-0001",
    "AppBench": "appbench-test-0680",
    "RapidAPI": "rapidapi-G2_category-0101",
}
MODES = {"RapidAPI": "interactive", "WebShop": "interactive"}
DPI = 100
ACCENT = "#3f51b5"  # the site's indigo (Material's default primary colour)


def play(task: str, mode: str | None = None, **kwargs: Any) -> tuple[Any, str, list[tuple[str, str]], float, dict]:
    """The oracle's episode of the chosen task: (env, prompt, [(action, observation)], reward, last info)."""
    env = gym.make(f"toolbench/{task}-v0", mode=mode or MODES.get(task, "program"), **kwargs)
    prompt, info = env.reset(options={"task_id": EPISODES[task]})
    steps, reward = [], 0.0
    for action in env.unwrapped.oracle_actions(env.unwrapped.task):
        observation, reward, terminated, truncated, info = env.step(action)
        steps.append((action, observation))
        if terminated or truncated:
            break
    return env, prompt, steps, float(reward), info


def wrap(text: str, width: int, max_lines: int) -> str:
    """``text`` wrapped to ``width`` columns, line by line, cut to ``max_lines`` with an ellipsis."""
    lines: list[str] = []
    for line in text.splitlines() or [""]:
        lines.extend(textwrap.wrap(line, width, replace_whitespace=False, drop_whitespace=False) or [""])
    if len(lines) > max_lines:
        lines = [*lines[: max_lines - 1], "..."]
    return "\n".join(lines)


LINE = 8.2 * 1.3 / 72  # one line of 8.2-point monospace text, in inches


def episode_card(title: str, blocks: list[tuple[str, str]], footer: str, out: Path) -> None:
    """An episode as stacked text blocks (the task, each action, what the env answered), laid out in
    inches so that every line keeps its size whatever the number of blocks."""
    heights = [0.42 + LINE * (text.count("\n") + 1) for _, text in blocks]
    total = 0.6 + sum(heights) + 0.08 * len(blocks) + 0.4
    fig = plt.figure(figsize=(10, total), dpi=DPI)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.axis("off")
    ax.set_xlim(0, 10)
    ax.set_ylim(0, total)
    ax.text(0.2, total - 0.18, title, va="top", fontsize=12, fontweight="bold")
    y = total - 0.6
    for index, ((label, text), height) in enumerate(zip(blocks, heights)):
        colour = "#e8eaf6" if index == 0 else ("#fff8e1" if index % 2 else "#f1f8e9")
        ax.add_patch(FancyBboxPatch((0.1, y - height), 9.8, height, boxstyle="round,pad=0,rounding_size=0.08",
                                    facecolor=colour, edgecolor="#c5cae9"))  # fmt: skip
        ax.text(0.25, y - 0.08, label, va="top", fontsize=9, fontweight="bold", color=ACCENT)
        ax.text(0.25, y - 0.34, text, va="top", fontsize=8.2, family="monospace")
        y -= height + 0.08
    ax.text(0.2, 0.15, footer, va="bottom", fontsize=9, color="#33691e")
    fig.savefig(out, dpi=DPI)
    plt.close(fig)


def text_env(task: str, out: Path, max_observation_lines: int = 9) -> None:
    """An episode card: the prompt, then each action and its observation, then the reward."""
    env, prompt, steps, reward, info = play(task)
    blocks = [("task (the first observation)", wrap(prompt, 110, 6))]
    for number, (action, observation) in enumerate(steps, 1):
        label = f"action {number}" if len(steps) > 1 else "action"
        blocks.append((label, wrap(action, 110, 8)))
        blocks.append(("observation", wrap(observation, 110, max_observation_lines if len(steps) == 1 else 3)))
    env.close()
    footer = f"reward {reward:.1f}, success {info['success']}  (the oracle's episode of {EPISODES[task]})"
    episode_card(f"toolbench/{task}-v0", blocks, footer, out)


def google_sheets(out: Path) -> None:
    """The worksheet before and after the oracle's code: the code runs, then a cell of ours prints
    the sheet back through the env (interactive mode), then ``submit`` scores it."""
    env = gym.make("toolbench/GoogleSheets-v0", mode="interactive")
    prompt, _ = env.reset(options={"task_id": EPISODES["GoogleSheets"]})
    code, submit = env.unwrapped.oracle_actions(env.unwrapped.task)
    env.step(code)
    after, *_ = env.step("for row in worksheet.get_all_values():\n    print(' | '.join(row))")
    _, reward, _, _, info = env.step(submit)
    env.close()
    instruction, _, table = prompt.partition("\n\n")
    before = [line.strip("|").split("|") for line in table.splitlines() if line.startswith("|")]
    rows_after = [line.split(" | ") for line in after.splitlines() if " | " in line]
    fig = plt.figure(figsize=(10, 4.4), dpi=DPI)
    fig.text(0.02, 0.95, "toolbench/GoogleSheets-v0", fontsize=12, fontweight="bold", va="top")
    fig.text(0.02, 0.88, f"task: {instruction}", fontsize=9.5, va="top")
    fig.text(0.02, 0.81, code, fontsize=8.2, family="monospace", va="top", color="#4e342e",
             bbox={"facecolor": "#fff8e1", "edgecolor": "#c5cae9", "boxstyle": "round"})  # fmt: skip
    for left, label, rows in ((0.02, "the worksheet before", before), (0.52, "after the code (read back)", rows_after)):
        ax = fig.add_axes((left, 0.06, 0.46, 0.46))
        ax.axis("off")
        ax.set_title(label, fontsize=9.5, color=ACCENT, loc="left")
        body = [[cell.strip() for cell in row] for row in rows]
        tbl = ax.table(cellText=body[1:], colLabels=body[0], loc="upper left", cellLoc="left")
        tbl.auto_set_font_size(False)
        tbl.set_fontsize(8)
        tbl.scale(1, 1.15)
        for (r, _), cell in tbl.get_celld().items():
            cell.set_edgecolor("#c5cae9")
            if r == 0:
                cell.set_facecolor("#e8eaf6")
    fig.text(0.98, 0.015, f"reward {reward:.1f}, success {info['success']}", ha="right", fontsize=9, color="#33691e")
    fig.savefig(out, dpi=DPI)
    plt.close(fig)


def tabletop(out: Path) -> None:
    """The front camera before and after the oracle's program."""
    env = gym.make("toolbench/Tabletop-v0", render_mode="rgb_array")
    prompt, _ = env.reset(options={"task_id": EPISODES["Tabletop"]})
    before = env.render()
    program = env.unwrapped.oracle_actions(env.unwrapped.task)[0]
    _, reward, _, _, info = env.step(program)
    after = env.render()
    env.close()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4.3), dpi=DPI)
    for ax, frame, label in ((axes[0], before, "before"), (axes[1], after, "after the program")):
        ax.imshow(frame)
        ax.set_title(label, fontsize=10, color=ACCENT)
        ax.axis("off")
    instruction = prompt.strip().splitlines()[-1].lstrip("# ")
    fig.suptitle(f"toolbench/Tabletop-v0: {instruction}", fontsize=12, fontweight="bold")
    fig.text(0.5, 0.02, f"reward {reward:.1f}, success {info['success']}: the front camera (render_mode='rgb_array')",
             ha="center", fontsize=9, color="#33691e")  # fmt: skip
    fig.savefig(out, dpi=DPI)
    plt.close(fig)


def virtualhome(out: Path) -> None:
    """The oracle's program beside its home: rooms, what stands in them, and the chain of what is in
    or on what for every object the program names (those and their rooms highlighted)."""
    from toolbench.mock_services.virtualhome import ROOMS, build_home

    env, prompt, steps, reward, info = play("VirtualHome")
    env.close()
    task = toolbench.load_tasks("VirtualHome", "test")
    record = next(t for t in task if t.id == EPISODES["VirtualHome"])
    program = steps[0][0]
    home = build_home(record.extra["home"])
    named = {arg.strip() for call in re.findall(r"\(([^)]*)\)", program) for arg in call.split(",") if arg.strip()}
    index = {name: i for i, name in enumerate(home.names)}
    parent = {i: place[1] for i, place in enumerate(home.places) if place is not None}
    relation = {i: place[0] for i, place in enumerate(home.places) if place is not None}
    marked = set()
    for name in named:
        node = index.get(name)
        while node is not None:
            marked.add(node)
            node = parent.get(node)
    fig = plt.figure(figsize=(13, 6.6), dpi=90)
    fig.text(0.01, 0.97, f"toolbench/VirtualHome-v0: {prompt}", fontsize=12, fontweight="bold", va="top")
    fig.text(0.01, 0.90, "the program (the oracle's)\n\n" + program, fontsize=9, family="monospace", va="top",
             bbox={"facecolor": "#fff8e1", "edgecolor": "#c5cae9", "boxstyle": "round"})  # fmt: skip
    shown = (
        f"home {home.number} of 5: its rooms, what stands in each,\nand what is in or on that along the named objects"
    )
    fig.text(0.01, 0.04, f"reward {reward:.1f}, success {info['success']}\n{shown}", fontsize=9, color="#33691e")
    ax = fig.add_axes((0.25, 0.02, 0.74, 0.86))
    ax.axis("off")
    rooms = [index[room] for room in ROOMS if room in index]
    children: dict[int, list[int]] = {}
    for node, up in parent.items():
        children.setdefault(up, []).append(node)
    row_height = 1.0
    deepest = 0.0
    for column, room in enumerate(rooms):
        x = column * 3.0
        hot = room in marked
        ax.plot([x], [0], "s", markersize=9, color="#ff9800" if hot else ACCENT)
        ax.text(x + 0.15, 0.35, home.names[room], fontsize=9, fontweight="bold", color="#e65100" if hot else ACCENT)
        y = -row_height

        def draw(node: int, depth: int, x0: float, y0: float, y_now: float) -> float:
            """Draw ``node`` under its parent at (x0, y0); return the next free row."""
            hot = node in marked
            xn = x0 + 0.35
            style = "-" if relation[node] == "in" else "--"
            ax.plot(
                [x0, x0, xn],
                [y0, y_now, y_now],
                style,
                color="#ff9800" if hot else "#9fa8da",
                linewidth=1.6 if hot else 0.7,
            )
            ax.plot([xn], [y_now], "o", markersize=4.5 if hot else 3, color="#ff9800" if hot else "#5c6bc0")
            ax.text(xn + 0.1, y_now, home.names[node], fontsize=8.5 if hot else 7, va="center",
                    color="#e65100" if hot else "#37474f", fontweight="bold" if hot else "normal")  # fmt: skip
            next_y = y_now - row_height
            for child in sorted(children.get(node, []), key=lambda n: home.names[n]):
                if child in marked:  # what is in or on a piece of furniture: only along a named object's chain
                    next_y = draw(child, depth + 1, xn, y_now, next_y)
            return next_y

        for node in sorted(children.get(room, []), key=lambda n: home.names[n]):
            y = draw(node, 1, x, 0, y)
        deepest = min(deepest, y)
    ax.plot([], [], "-", color="#9fa8da", label="in")
    ax.plot([], [], "--", color="#9fa8da", label="on")
    ax.plot([], [], "o", color="#ff9800", label="named by the program (and where it is)")
    fig.legend(loc="lower left", bbox_to_anchor=(0.01, 0.16), fontsize=8, frameon=False)
    ax.set_xlim(-0.3, 3.0 * len(rooms))
    ax.set_ylim(deepest - 0.5, 1.0)
    fig.savefig(out, dpi=90)
    plt.close(fig)


def webshop(out: Path) -> None:
    """The results page of the oracle's search, as a browser shows the served shop."""
    env, prompt, steps, reward, info = play("WebShop")
    env.close()
    query = re.fullmatch(r"search\[(.*)\]", steps[0][0]).group(1)
    session = toolbench.load_tasks("WebShop", "test")[1].extra["session"]
    chromium = shutil.which("chromium")
    if chromium is None:
        results = steps[0][1]
        blocks = [("instruction", wrap(prompt, 110, 4)), (steps[0][0], wrap(results.replace(" [SEP] ", "\n"), 110, 22))]
        episode_card("toolbench/WebShop-v0 (the results page's text)", blocks,
                     f"reward {reward:.1f}, success {info['success']}", out)  # fmt: skip
        return
    server = subprocess.Popen(
        [sys.executable, "-m", "toolbench", "serve", "webshop", "--port", "0", "--goal", str(session)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        line = server.stdout.readline()  # "serving webshop; open http://127.0.0.1:PORT/fixed_<n> ..."
        base = re.search(r"(http://[^/\s]+)", line).group(1)
        url = f"{base}/search_results/fixed_{session}/1?keywords={quote(query)}"
        with tempfile.TemporaryDirectory() as profile:
            subprocess.run(
                [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                 f"--user-data-dir={profile}", f"--screenshot={out}", "--window-size=1000,760", url],
                check=True, capture_output=True, timeout=120,
            )  # fmt: skip
    finally:
        server.terminate()
        server.wait(timeout=30)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--only", nargs="+", metavar="TASK", help="remake these envs' pictures only")
    args = parser.parse_args(argv)
    makers: dict[str, Callable[[Path], None]] = {
        "GoogleSheets": google_sheets,
        "Tabletop": tabletop,
        "VirtualHome": virtualhome,
        "WebShop": webshop,
    }
    IMAGES.mkdir(exist_ok=True)
    for spec in toolbench.TASKS:
        if args.only and spec.name not in args.only:
            continue
        out = IMAGES / f"{spec.name.lower()}.png"
        maker = makers.get(spec.name)
        if maker is not None:
            maker(out)
        else:
            text_env(spec.name, out)
        print(f"wrote {out} ({out.stat().st_size // 1024} KB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
