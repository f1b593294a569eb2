"""Google Sheets' train and unseen splits: a parser fitted to the seen wordings solves test, not
unseen; the oracle solves unseen and train; the parts every answer shares earn nothing."""

import re

import gymnasium as gym
import pytest

import toolbench
from tests.episodes import play
from toolbench.taskgen.sheets import HELD_OUT_KEYS, UNSEEN_TEMPLATES

ENV_ID = "toolbench/GoogleSheets-v0"


# ---------------------------------------------------------------------- a parser of the seen wordings
def table_of(prompt):
    rows = [line.strip("| ").split(" | ") for line in prompt.split("\n") if line.startswith("| ")]
    return rows[0], rows[1:]


def number(text):
    return float(text) if "." in text else int(text)


def letter(index):
    return chr(ord("A") + index - 1)


def row_of(header, data, label):
    """The 1-based row a label such as 'Month Jun', 'row 4' or 'Jun' names."""
    if label.startswith("row "):
        return int(label[4:])
    for r, row in enumerate(data, start=2):
        for c, cell in enumerate(row):
            if label in (cell, f"{header[c]} {cell}"):
                return r
    raise LookupError(label)


FORMATS = {
    r"(Make the header row bold|Put the header row in bold type)": ("head", "{'textFormat': {'bold': True}}"),
    r"(light gray background|Shade the header row light gray)": (
        "head",
        "{'backgroundColor': {'red': 0.9, 'green': 0.9, 'blue': 0.9}}",
    ),
    r"(Center the text of the whole table|Align every cell of the table)": ("all", "{'horizontalAlignment': 'CENTER'}"),
    r"(font size to 14 and make it italic|italic with a 14 point font)": (
        "head",
        "{'textFormat': {'fontSize': 14, 'italic': True}}",
    ),
}
FUNCTIONS = {"total": "SUM", "average": "AVERAGE", "largest": "MAX", "smallest": "MIN"}
OPS = {"minus": "-", "plus": "+", "times": "*"}
SORTS = {
    "from lowest to highest": "asc",
    "from highest to lowest": "des",
    "alphabetically": "asc",
    "in reverse alphabetical order": "des",
}


def parse(prompt):
    """Code for a prompt in one of the demo and train wordings, or None."""
    text = prompt.split("\n\n")[0]
    header, data = table_of(prompt)
    n, width = len(data) + 1, len(header)
    last, col = letter(width), {h: i + 1 for i, h in enumerate(header)}
    match = re.fullmatch(r"(?:Change the (.+) of (.+)|Set (.+)'s (.+)) to (\S+)\.", text)
    if match:
        head, key = (match[1], match[2]) if match[1] else (match[4], match[3])
        return f"worksheet.update_cell({row_of(header, data, key)}, {col[head]}, {number(match[5])})"
    match = re.fullmatch(r"Update (.+): its (.+) should now be (\S+)\.|Please put (\S+) as the (.+) for (.+)\.", text)
    if match:
        key, head, value = (match[1], match[2], match[3]) if match[1] else (match[6], match[5], match[4])
        return f"worksheet.update_cell({row_of(header, data, key)}, {col[head]}, {number(value)})"
    match = re.search(r"header '(.+)' right after .* write '(.+)' in it|start a '(.+)' column .* with '(.+)'", text)
    if match:
        head, value = (match[1], match[2]) if match[1] else (match[3], match[4])
        new = letter(width + 1)
        return f"worksheet.update([['{head}']] + [['{value}']] * {n - 1}, '{new}1:{new}{n}')"
    match = re.search(r"(?:computes|giving) the (total|average|largest|smallest) (.+)\.", text)
    if match:
        c = letter(col[match[2]])
        return f"worksheet.update([['={FUNCTIONS[match[1]]}({c}2:{c}{n})']], '{c}{n + 1}', raw=False)"
    match = re.search(
        r"'(.+)' (?:and, in each row, a formula computing|whose rows .* formula for) (.+) (minus|plus|times) (.+)\.",
        text,
    )
    if match:
        a, b, new = letter(col[match[2]]), letter(col[match[4]]), letter(width + 1)
        return (
            f"worksheet.update([['{match[1]}']] + [[f'={a}{{r}}{OPS[match[3]]}{b}{{r}}'] "
            f"for r in range(2, {n + 1})], '{new}1', raw=False)"
        )
    match = re.fullmatch(
        r"(?:Sort the rows by|Reorder the data rows by) (.+?),? (from .+|alphabetically|in reverse .+?)[,;] .*", text
    )
    if match:
        return f"worksheet.sort(({col[match[1]]}, '{SORTS[match[2]]}'), range='A2:{last}{n}')"
    match = re.fullmatch(r"Delete the row for (.+)\.|Remove (.+) from the sheet\.|Get rid of the (.+) row\.", text)
    if match:
        return f"worksheet.delete_rows({row_of(header, data, match[1] or match[2] or match[3])})"
    match = re.fullmatch(
        r"(?:Delete the (.+) column|Remove the column (.+)|Drop the (.+) column from the table)\.", text
    )
    if match:
        return f"worksheet.delete_columns({col[match[1] or match[2] or match[3]]})"
    match = re.search(
        r"titled '(.+)' just before the (.+) column|Before the (.+) column, insert .* headed '(.+)'", text
    )
    if match:
        head, before = (match[1], match[2]) if match[1] else (match[4], match[3])
        return f"worksheet.insert_cols([['{head}']], {col[before]})"
    match = re.search(r"(?:title|reading) '(.+)'", text)
    if match:
        return f"worksheet.insert_row(['{match[1]}'], index=1)\nworksheet.merge_cells('A1:{last}1')"
    if "basic filter" in text:
        return f"worksheet.set_basic_filter('A1:{last}{n}')"
    match = re.search(r"Show the (.+) values as dollars|Format (.+) as currency", text)
    if match:
        c = letter(col[match[1] or match[2]])
        return f"worksheet.format('{c}2:{c}{n}', {{'numberFormat': {{'type': 'CURRENCY', 'pattern': '$#,##0.00'}}}})"
    for pattern, (where, style) in FORMATS.items():
        if re.search(pattern, text):
            return f"worksheet.format('{'A1:' + last + '1' if where == 'head' else 'A1:' + last + str(n)}', {style})"
    return None


def solved_share(split):
    env = gym.make(ENV_ID, split=split, disable_env_checker=True).unwrapped
    solved = 0
    for task in env.tasks:
        try:
            code = parse(task.prompt)
        except (LookupError, KeyError):
            code = None
        if code is not None:
            solved += bool(play(env, task.id, [code])[4]["success"])
    env.close()
    return solved / len(env.tasks)


def test_a_parser_of_the_seen_wordings_solves_test_not_unseen():
    assert solved_share("test") >= 0.6
    assert solved_share("unseen") <= 0.1


# ---------------------------------------------------------------------- oracle, held-out values
@pytest.mark.parametrize("mode", ["program", "interactive"])
def test_the_oracle_solves_unseen_and_a_train_sample(mode):
    for split, step in (("unseen", 1), ("train", 25)):
        env = gym.make(ENV_ID, split=split, mode=mode, disable_env_checker=True).unwrapped
        for task in env.tasks[:: step if mode == "program" else step * 4]:
            _, reward, *_, info = play(env, task.id, env.oracle_actions(task))
            assert reward == 1.0 and info["success"], (task.id, info)
        env.close()


def test_unseen_holds_out_its_templates_and_worksheets():
    unseen = toolbench.load_tasks("GoogleSheets", "unseen")
    assert {t.get("template") for t in unseen} == set(UNSEEN_TEMPLATES)
    for key in ("template", *HELD_OUT_KEYS):
        held = {t.get(key) for t in unseen}
        for split in ("test", "demo", "train"):
            assert not held & {t.get(key) for t in toolbench.load_tasks("GoogleSheets", split)}, (key, split)
    train = toolbench.load_tasks("GoogleSheets", "train")
    assert all(isinstance(t.get("difficulty"), int) for t in train + unseen)
    assert {t.get("difficulty") for t in unseen} == {1, 2, 3}


# ---------------------------------------------------------------------- partial credit
@pytest.mark.parametrize("split", ["test", "unseen"])
def test_the_parts_every_answer_shares_earn_nothing(split):
    env = gym.make(ENV_ID, split=split, disable_env_checker=True).unwrapped
    scores, successes = [], 0
    for task in env.tasks:
        _, reward, *_, info = play(env, task.id, env.shared_parts_actions(task))
        assert info["executable"], info
        scores.append(info["score"])
        successes += info["success"]
    env.close()
    assert sum(scores) / len(scores) <= 0.15 and successes == 0
