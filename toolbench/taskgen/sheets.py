"""Google Sheets workbooks and task sets.

Six small business-style worksheets; 70 test tasks and 10 demonstrations over the benchmark's
use cases: updating values, formulas (sums below a column...), sorting, adding and deleting rows
and columns, merging, filtering, formatting, pivot tables, and pandas manipulations through
gspread-dataframe. References use the gspread 6 API (values first, then the range).
"""

from __future__ import annotations

from typing import Any

from toolbench.envs.sheets import prompt_for
from toolbench.taskgen import (
    SHIPPED_SEED,
    SHIPPED_SIZES,
    Files,
    aligner,
    generator,
    jsonl,
    near_duplicates,
    rng_for,
    split_maker,
    spread,
)
from toolbench.taskgen.sheets_books import BOOK_KEYS, GROUP_COLUMN, TRAIN_BOOKS, UNSEEN_BOOKS

WORKBOOKS: dict[str, list[list[Any]]] = {
    "Products": [
        ["Product", "Unit Cost", "Price", "Stock"],
        ["Apples", 0.4, 0.99, 120],
        ["Bananas", 0.2, 0.59, 200],
        ["Cherries", 2.5, 5.99, 35],
        ["Dates", 3.1, 6.49, 18],
        ["Figs", 1.8, 3.99, 42],
        ["Grapes", 1.2, 2.79, 76],
        ["Kiwis", 0.5, 1.19, 90],
        ["Lemons", 0.3, 0.79, 150],
    ],
    "Sales": [
        ["Month", "Region", "Rep", "Units", "Revenue"],
        ["Jan", "North", "Avery", 120, 3600],
        ["Jan", "South", "Blake", 95, 2850],
        ["Feb", "North", "Avery", 130, 3900],
        ["Feb", "South", "Casey", 80, 2400],
        ["Feb", "West", "Drew", 110, 3300],
        ["Mar", "North", "Blake", 140, 4200],
        ["Mar", "West", "Drew", 105, 3150],
        ["Mar", "South", "Casey", 90, 2700],
        ["Apr", "West", "Avery", 125, 3750],
        ["Apr", "North", "Casey", 100, 3000],
    ],
    "Inventory": [
        ["SKU", "Item", "Category", "Quantity", "Reorder Level"],
        ["A-100", "Stapler", "Office", 14, 10],
        ["A-101", "Paper Ream", "Office", 6, 20],
        ["B-200", "Hammer", "Tools", 25, 5],
        ["B-201", "Screwdriver Set", "Tools", 3, 8],
        ["C-300", "Desk Lamp", "Lighting", 12, 6],
        ["C-301", "LED Bulb", "Lighting", 40, 30],
        ["D-400", "Notebook", "Office", 55, 25],
        ["D-401", "Marker Pack", "Office", 9, 12],
    ],
    "Grades": [
        ["Student", "Math", "Science", "English"],
        ["Ana", 88, 92, 79],
        ["Ben", 72, 65, 84],
        ["Chloe", 95, 89, 91],
        ["Dev", 60, 74, 68],
        ["Elif", 81, 77, 95],
        ["Finn", 93, 98, 70],
        ["Gia", 67, 82, 88],
    ],
    "Employees": [
        ["Name", "Department", "Salary", "Start Year"],
        ["Harper", "Engineering", 98000, 2016],
        ["Ivan", "Marketing", 67000, 2019],
        ["Jada", "Engineering", 112000, 2013],
        ["Kofi", "Sales", 58000, 2021],
        ["Lena", "Marketing", 72000, 2018],
        ["Mateo", "Sales", 61000, 2020],
        ["Nora", "Engineering", 89000, 2022],
        ["Omar", "Support", 52000, 2017],
    ],
    "Expenses": [
        ["Month", "Rent", "Utilities", "Supplies"],
        ["Jan", 2000, 310, 145],
        ["Feb", 2000, 295, 120],
        ["Mar", 2000, 280, 160],
        ["Apr", 2100, 240, 135],
        ["May", 2100, 210, 150],
        ["Jun", 2100, 260, 175],
    ],
}

# The column that names a row in each workbook (used in prompts such as "the row for Figs").
KEY = {"Products": 0, "Sales": None, "Inventory": 1, "Grades": 0, "Employees": 0, "Expenses": 0, **BOOK_KEYS}
#: Every worksheet a task may start from: the test set's six, train's own, and unseen's held-out ones.
ALL_BOOKS: dict[str, list[list[Any]]] = {**WORKBOOKS, **TRAIN_BOOKS, **UNSEEN_BOOKS}
#: Record keys whose values ``unseen`` holds out: its worksheets are in no other split.
HELD_OUT_KEYS = ("question_sheet_name",)
HAS_DIFFICULTY = True
CATEGORIES = [
    "update_cell",
    "update_range",
    "formula_total",
    "formula_column",
    "sort",
    "append_row",
    "insert_row",
    "delete_rows",
    "delete_columns",
    "insert_column",
    "merge",
    "filter",
    "format",
    "pivot",
    "pandas",
]


#: Train's other wordings of each seen template (``_Maker.say``); the first wording is the test set's.
TRAIN_PHRASES: dict[str, list[str]] = {
    "update_cell": [
        "Update {key}: its {header} should now be {value}.",
        "Please put {value} as the {header} for {key}.",
    ],
    "update_range": ["Right of the last column, start a '{header}' column and fill every row with '{value}'."],
    "formula_total": ["Below the {label} column, put a formula giving {words} {label}."],
    "formula_column": ["Create a new last column '{header}' whose rows each hold a formula for {a} {verb} {b}."],
    "sort": ["Reorder the data rows by {header}, {words}; the header row stays on top."],
    "append_row": ["Append a new row after the last one with {fields}."],
    "insert_row": ["Put a new row with {fields} directly above {label}."],
    "delete_rows": ["Get rid of the {label} row."],
    "delete_columns": ["Drop the {header} column from the table."],
    "insert_column": ["Before the {before} column, insert an empty column headed '{header}'."],
    "merge": ["Add a title row on top reading '{title}' and merge it across A1:{last}1."],
    "filter": ["Add a basic filter covering {range}."],
    "format0": ["Put the header row in bold type."],
    "format1": ["Format {header} as currency, pattern $#,##0.00."],
    "format2": ["Shade the header row light gray (0.9 for red, green and blue)."],
    "format3": ["Align every cell of the table to the horizontal center."],
    "format4": ["Make the header row italic with a 14 point font."],
}
#: Operations (state-changing calls) a seen template's reference makes: its difficulty.
SEEN_DIFFICULTY = {"merge": 2, "pandas": 2, "pivot": 2}


def letter(index: int) -> str:
    """Column letter of a 1-based index (A..Z is enough for these worksheets)."""
    return chr(ord("A") + index - 1)


def table_text(rows: list[list[Any]]) -> str:
    return "\n".join("| " + " | ".join(str(v) for v in row) + " |" for row in rows)


def numeric_columns(rows: list[list[Any]]) -> list[int]:
    return [i + 1 for i, v in enumerate(rows[1]) if isinstance(v, (int, float)) and not isinstance(v, bool)]


def text_columns(rows: list[list[Any]]) -> list[int]:
    return [i + 1 for i, v in enumerate(rows[1]) if isinstance(v, str)]


def pivot_code(rows: list[list[Any]], group: int, value: int, function: str, anchor: int) -> str:
    """A pivot table of ``function`` over column ``value`` by column ``group`` (1-based), at column ``anchor``."""
    return (
        "sheet.batch_update({'requests': [{'updateCells': {\n"
        "    'rows': [{'values': [{'pivotTable': {\n"
        f"        'source': {{'sheetId': worksheet.id, 'startRowIndex': 0, 'endRowIndex': {len(rows)}, "
        f"'startColumnIndex': 0, 'endColumnIndex': {len(rows[0])}}},\n"
        f"        'rows': [{{'sourceColumnOffset': {group - 1}, 'showTotals': True, 'sortOrder': 'ASCENDING'}}],\n"
        f"        'values': [{{'summarizeFunction': '{function}', 'sourceColumnOffset': {value - 1}}}]}}}}]}}],\n"
        f"    'start': {{'sheetId': worksheet.id, 'rowIndex': 0, 'columnIndex': {anchor - 1}}},\n"
        "    'fields': 'pivotTable'}}]})"
    )


class _Maker:
    """Draws seen-template tasks. ``books`` are the worksheets it may use; ``phrasing`` (train only)
    picks among more wordings of each template, from a stream of its own, so the draws of the
    shipped test and demo sets stay what they were."""

    def __init__(self, split: str, books: dict[str, list[list[Any]]] | None = None, phrasing: Any = None):
        self.rng = rng_for("sheets", "tasks", split)
        self.books = WORKBOOKS if books is None else books
        self.phrasing = phrasing
        self.phrase_index = 0

    def workbook(self, needs_key: bool = False) -> tuple[str, list[list[Any]]]:
        names = [n for n in self.books if not needs_key or KEY[n] is not None]
        name = self.rng.choice(names)
        return name, self.books[name]

    def say(self, frame: str, text: str, **values: Any) -> str:
        """``text``, or in train one of the template's other wordings (``phrase_index`` says which)."""
        self.phrase_index = 0
        frames = TRAIN_PHRASES.get(frame, [])
        if self.phrasing is None or not frames:
            return text
        self.phrase_index = self.phrasing.randrange(len(frames) + 1)
        return text if self.phrase_index == 0 else frames[self.phrase_index - 1].format(**values)

    def row_label(self, name: str, rows: list[list[Any]], r: int) -> str:
        key = KEY[name]
        return f"{rows[0][key]} {rows[r - 1][key]}" if key is not None else f"row {r}"

    def make(self, category: str) -> tuple[str, str, str, bool]:
        """(worksheet name, instruction, reference code, check_format)."""
        rng = self.rng
        name, rows = self.workbook(needs_key=category in ("update_cell", "delete_rows", "insert_row"))
        n, width = len(rows), len(rows[0])
        last = letter(width)
        if category == "update_cell":
            r = rng.randint(2, n)
            c = rng.choice(numeric_columns(rows))
            value = rows[r - 1][c - 1] + rng.choice([1, 2, 5, 10])
            key = rows[r - 1][KEY[name]]
            text = rng.choice(
                [f"Change the {rows[0][c - 1]} of {key} to {value}.", f"Set {key}'s {rows[0][c - 1]} to {value}."]
            )
            text = self.say(category, text, key=key, header=rows[0][c - 1], value=value)
            return name, text, f"worksheet.update_cell({r}, {c}, {value})", False
        if category == "update_range":
            header = rng.choice(["Notes", "Status", "Checked"])
            value = {"Notes": "none", "Status": "active", "Checked": "yes"}[header]
            column = letter(width + 1)
            text = (
                f"Add a column with the header '{header}' right after the table and write '{value}' "
                f"in it for every row."
            )
            code = f"worksheet.update([['{header}']] + [['{value}']] * {n - 1}, '{column}1:{column}{n}')"
            return name, self.say(category, text, header=header, value=value), code, False
        if category == "formula_total":
            c = rng.choice(numeric_columns(rows))
            col, label = letter(c), rows[0][c - 1]
            function, words = rng.choice(
                [("SUM", "the total"), ("AVERAGE", "the average"), ("MAX", "the largest"), ("MIN", "the smallest")]
            )
            text = f"In the cell just below the last {label} value, add a formula that computes {words} {label}."
            code = f"worksheet.update([['={function}({col}2:{col}{n})']], '{col}{n + 1}', raw=False)"
            return name, self.say(category, text, label=label, words=words), code, False
        if category == "formula_column":
            numbers = numeric_columns(rows)
            a, b = rng.sample(numbers, 2) if len(numbers) > 1 else (numbers[0], numbers[0])
            op, verb = rng.choice([("-", "minus"), ("+", "plus"), ("*", "times")])
            header = f"{rows[0][a - 1]} {verb} {rows[0][b - 1]}"
            col = letter(width + 1)
            text = (
                f"Add a column after the table with the header '{header}' and, in each row, a formula "
                f"computing {rows[0][a - 1]} {verb} {rows[0][b - 1]}."
            )
            code = (
                f"worksheet.update([['{header}']] + [[f'={letter(a)}{{r}}{op}{letter(b)}{{r}}'] "
                f"for r in range(2, {n + 1})], '{col}1', raw=False)"
            )
            text = self.say(category, text, header=header, a=rows[0][a - 1], b=rows[0][b - 1], verb=verb)
            return name, text, code, False
        if category == "sort":
            while True:  # a sort that leaves the rows as they are would be no task
                c = rng.choice(numeric_columns(rows) + text_columns(rows))
                order = rng.choice(["asc", "des"])
                data = rows[1:]
                if sorted(data, key=lambda row: row[c - 1], reverse=order == "des") != data:
                    break
            numeric = c in numeric_columns(rows)
            words = {
                ("asc", True): "from lowest to highest",
                ("des", True): "from highest to lowest",
                ("asc", False): "alphabetically",
                ("des", False): "in reverse alphabetical order",
            }[order, numeric]
            text = f"Sort the rows by {rows[0][c - 1]} {words}, keeping the header in row 1."
            text = self.say(category, text, header=rows[0][c - 1], words=words)
            return name, text, f"worksheet.sort(({c}, '{order}'), range='A2:{last}{n}')", False
        if category == "append_row":
            new = self.new_row(name, rows)
            text = "Add this row at the end of the table: " + ", ".join(f"{h}: {v}" for h, v in zip(rows[0], new)) + "."
            text = self.say(category, text, fields=", ".join(f"{h} {v}" for h, v in zip(rows[0], new)))
            return name, text, f"worksheet.append_row({new!r})", False
        if category == "insert_row":
            r = rng.randint(2, n)
            new = self.new_row(name, rows)
            text = (
                f"Insert this row just above the row for {self.row_label(name, rows, r)}: "
                + ", ".join(f"{h}: {v}" for h, v in zip(rows[0], new))
                + "."
            )
            fields = ", ".join(f"{h} {v}" for h, v in zip(rows[0], new))
            text = self.say(category, text, fields=fields, label=self.row_label(name, rows, r))
            return name, text, f"worksheet.insert_row({new!r}, index={r})", False
        if category == "delete_rows":
            r = rng.randint(2, n)
            text = rng.choice(
                [
                    f"Delete the row for {self.row_label(name, rows, r)}.",
                    f"Remove {self.row_label(name, rows, r)} from the sheet.",
                ]
            )
            return (
                name,
                self.say(category, text, label=self.row_label(name, rows, r)),
                f"worksheet.delete_rows({r})",
                False,
            )
        if category == "delete_columns":
            c = rng.randint(2, width)
            text = rng.choice([f"Delete the {rows[0][c - 1]} column.", f"Remove the column {rows[0][c - 1]}."])
            text = self.say(category, text, header=rows[0][c - 1])
            return name, text, f"worksheet.delete_columns({c})", False
        if category == "insert_column":
            c = rng.randint(2, width)
            header = rng.choice(["Comment", "Owner", "Flag"])
            text = f"Insert a new column titled '{header}' just before the {rows[0][c - 1]} column."
            text = self.say(category, text, header=header, before=rows[0][c - 1])
            return name, text, f"worksheet.insert_cols([['{header}']], {c})", False
        if category == "merge":
            title = f"{name} report"
            text = (
                f"Insert a new first row holding the title '{title}' in A1, then merge A1 through "
                f"{last}1 so the title spans the table."
            )
            code = f"worksheet.insert_row(['{title}'], index=1)\nworksheet.merge_cells('A1:{last}1')"
            return name, self.say(category, text, title=title, last=last), code, False
        if category == "filter":
            text = f"Turn on a basic filter over the table's range A1:{last}{n}."
            text = self.say(category, text, range=f"A1:{last}{n}")
            return name, text, f"worksheet.set_basic_filter('A1:{last}{n}')", False
        if category == "format":
            name, text, code, check_format = self.formatting(name, rows)
            return name, self.say(f"format{self.format_choice}", text, header=self.format_header), code, check_format
        if category == "pivot":
            return self.pivot() if self.books is WORKBOOKS else self.any_pivot()
        if category == "pandas":
            return self.pandas() if self.books is WORKBOOKS else self.any_pandas()
        raise ValueError(category)

    def new_row(self, name: str, rows: list[list[Any]]) -> list[Any]:
        rng = self.rng
        values = []
        for index, sample in enumerate(rows[1]):
            if isinstance(sample, str):
                values.append(rng.choice([r[index] for r in rows[1:]]) if index else f"New {rows[0][index]}")
            else:
                values.append(sample + rng.randint(1, 9))
        return values

    def formatting(self, name: str, rows: list[list[Any]]) -> tuple[str, str, str, bool]:
        rng = self.rng
        n, last = len(rows), letter(len(rows[0]))
        c = rng.choice(numeric_columns(rows))
        col = letter(c)
        choice = rng.randrange(5)
        self.format_choice, self.format_header = choice, rows[0][c - 1]
        if choice == 0:
            return (
                name,
                "Make the header row bold.",
                f"worksheet.format('A1:{last}1', {{'textFormat': {{'bold': True}}}})",
                True,
            )
        if choice == 1:
            return (
                name,
                f"Show the {rows[0][c - 1]} values as dollars with two decimals (pattern $#,##0.00).",
                f"worksheet.format('{col}2:{col}{n}', "
                "{'numberFormat': {'type': 'CURRENCY', 'pattern': '$#,##0.00'}})",
                True,
            )
        if choice == 2:
            return (
                name,
                "Give the header row a light gray background (red, green and blue all 0.9).",
                f"worksheet.format('A1:{last}1', {{'backgroundColor': {{'red': 0.9, 'green': 0.9, 'blue': 0.9}}}})",
                True,
            )
        if choice == 3:
            return (
                name,
                "Center the text of the whole table horizontally.",
                f"worksheet.format('A1:{last}{n}', {{'horizontalAlignment': 'CENTER'}})",
                True,
            )
        return (
            name,
            "Set the header row's font size to 14 and make it italic.",
            f"worksheet.format('A1:{last}1', {{'textFormat': {{'fontSize': 14, 'italic': True}}}})",
            True,
        )

    def pivot(self) -> tuple[str, str, str, bool]:
        rng = self.rng
        name = rng.choice(["Sales", "Inventory", "Employees"])
        rows = WORKBOOKS[name]
        group = text_columns(rows)[-1] if name != "Sales" else rng.choice([2, 3])
        if name == "Inventory":
            group = 3
        if name == "Employees":
            group = 2
        value = rng.choice(numeric_columns(rows))
        function, words = rng.choice(
            [("SUM", "total"), ("AVERAGE", "average"), ("MAX", "largest"), ("COUNTA", "number of rows by")]
        )
        anchor = len(rows[0]) + 2
        text = (
            f"Create a pivot table with its top-left corner at {letter(anchor)}1 that shows, for each "
            f"{rows[0][group - 1]}, the {words} {rows[0][value - 1]}, with a grand total."
        )
        if function == "COUNTA":
            text = (
                f"Create a pivot table with its top-left corner at {letter(anchor)}1 that counts the entries of "
                f"{rows[0][value - 1]} for each {rows[0][group - 1]}, with a grand total."
            )
        code = pivot_code(rows, group, value, function, anchor)
        return name, text, code, False

    def any_pivot(self) -> tuple[str, str, str, bool]:
        """A pivot table over any worksheet with a grouping column (train's books)."""
        rng = self.rng
        name = rng.choice([n for n in self.books if n in GROUP_COLUMN])
        rows = self.books[name]
        group, value = GROUP_COLUMN[name] + 1, rng.choice(numeric_columns(rows))
        function, words = rng.choice(
            [("SUM", "total"), ("AVERAGE", "average"), ("MAX", "largest"), ("MIN", "smallest")]
        )
        anchor = len(rows[0]) + 2
        text = (
            f"Create a pivot table with its top-left corner at {letter(anchor)}1 that shows, for each "
            f"{rows[0][group - 1]}, the {words} {rows[0][value - 1]}, with a grand total."
        )
        code = pivot_code(rows, group, value, function, anchor)
        return name, text, code, False

    def any_pandas(self) -> tuple[str, str, str, bool]:
        """A pandas edit of any worksheet (train's books)."""
        rng = self.rng
        name, rows = self.workbook()
        numbers = numeric_columns(rows)
        read, write = "df = get_as_dataframe(worksheet)\n", "worksheet.clear()\nset_with_dataframe(worksheet, df)"
        choice = rng.randrange(3)
        if choice == 0:
            column, pct = rows[0][rng.choice(numbers) - 1], rng.choice([5, 10, 20, 25])
            text = f"Raise every {column} by {pct}%, rounded to 2 decimals."
            return name, text, read + f"df[{column!r}] = (df[{column!r}] * {1 + pct / 100}).round(2)\n" + write, False
        if choice == 1:
            c = rng.choice(numbers)
            column, limit = rows[0][c - 1], sorted(r[c - 1] for r in rows[1:])[len(rows) // 2]
            text = f"Remove every row whose {column} is below {limit}."
            return name, text, read + f"df = df[df[{column!r}] >= {limit}]\n" + write, False
        a, b = rng.sample(numbers, 2)
        header = f"{rows[0][a - 1]} and {rows[0][b - 1]}"
        text = f"Add a column '{header}' holding each row's {rows[0][a - 1]} plus {rows[0][b - 1]}."
        code = read + f"df[{header!r}] = df[{rows[0][a - 1]!r}] + df[{rows[0][b - 1]!r}]\n" + write
        return name, text, code, False

    def pandas(self) -> tuple[str, str, str, bool]:
        rng = self.rng
        choice = rng.randrange(5)
        read = "df = get_as_dataframe(worksheet)\n"
        write = "worksheet.clear()\nset_with_dataframe(worksheet, df)"
        if choice == 0:
            pct = rng.choice([5, 10, 20])
            return (
                "Products",
                f"Raise every Price by {pct}%, rounded to 2 decimals.",
                read + f"df['Price'] = (df['Price'] * {1 + pct / 100}).round(2)\n" + write,
                False,
            )
        if choice == 1:
            return (
                "Grades",
                "Add a column 'Average' with each student's mean of Math, Science and English, rounded to 1 decimal.",
                read + "df['Average'] = df[['Math', 'Science', 'English']].mean(axis=1).round(1)\n" + write,
                False,
            )
        if choice == 2:
            year = rng.choice([2017, 2018, 2019])
            return (
                "Employees",
                f"Remove every employee who started before {year}.",
                read + f"df = df[df['Start Year'] >= {year}]\n" + write,
                False,
            )
        if choice == 3:
            return (
                "Inventory",
                "Keep only the items whose Quantity is below their Reorder Level.",
                read + "df = df[df['Quantity'] < df['Reorder Level']]\n" + write,
                False,
            )
        return (
            "Expenses",
            "Add a column 'Total' holding each month's Rent plus Utilities plus Supplies.",
            read + "df['Total'] = df['Rent'] + df['Utilities'] + df['Supplies']\n" + write,
            False,
        )


def generate_tasks(
    split: str, total: int, categories: list[str], avoid: frozenset[str] = frozenset()
) -> list[dict[str, Any]]:
    """``total`` different tasks, none answered by code in ``avoid``: the code names ``worksheet``,
    not its data, so a demonstration with a test task's code, on any worksheet, is its answer."""
    maker = _Maker(split)
    records, seen = [], set()
    for category in spread(total, categories):
        while True:  # draw again on a repeat, so every task is different
            name, text, code, check_format = maker.make(category)
            if (name, code) not in seen and code not in avoid:
                seen.add((name, code))
                break
        records.append(
            {
                "id": f"sheets-{split}-{len(records):04d}",
                "category": category,
                "prompt": prompt_for(text, name, WORKBOOKS[name]),
                "completion": [code],
                "question_sheet_name": name,
                "check_format": check_format,
                "template": category,
            }
        )
    return records


def check_references(records: list[dict[str, Any]]) -> None:
    """Every reference runs and changes its worksheet (a generator bug otherwise)."""
    from toolbench.core.tasks import tasks_from_records
    from toolbench.envs.sheets import GoogleSheetsEnv

    env = GoogleSheetsEnv(tasks=tasks_from_records(records, "sheets"))
    for task in env.tasks:
        env.reset(options={"task_id": task.id})
        before = env._read()
        _, reward, _, _, info = env.step(task.references[0])
        if reward != 1.0 or env._read() == before:
            raise AssertionError(f"{task.id}: the reference fails or changes nothing: {info}")


@aligner("sheets")
def alignment_records(count: int, seed: str) -> list[dict[str, Any]]:
    """Rounds of one task per category (some categories have few distinct tasks, so one long run
    could not keep every task different); stops when ``count`` are made or rounds add none."""
    records, seen, idle, round_number = [], set(), 0, 0
    while len(records) < count and idle < 20:
        fresh = 0
        for record in generate_tasks(f"align-{seed}-{round_number}", len(CATEGORIES), CATEGORIES):
            key = (record["prompt"], record["completion"][0])
            if key not in seen and len(records) < count:
                seen.add(key)
                records.append({**record, "id": f"sheets-align-{seed}-{len(records):05d}"})
                fresh += 1
        idle = 0 if fresh else idle + 1
        round_number += 1
    return records


@generator("sheets")
def generate(verify: bool = True) -> Files:
    import json

    test, demo = test_and_demo()
    files = {
        "workbooks.json": json.dumps(ALL_BOOKS, indent=1) + "\n",
        "test.jsonl": jsonl(test),
        "demo.jsonl": jsonl(demo),
        "train.jsonl": jsonl(make_split("train", SHIPPED_SIZES["train"], SHIPPED_SEED)),
        "unseen.jsonl": jsonl(make_split("unseen", SHIPPED_SIZES["unseen"], SHIPPED_SEED)),
    }
    if verify:
        from toolbench.core.tasks import fixture_file

        fixture_file("sheets", "workbooks.json").write_text(files["workbooks.json"], encoding="utf-8")
        check_references(test + demo)
        files["expected.json"] = json.dumps(expected_books(test + demo), sort_keys=True) + "\n"
    return files


def expected_books(records: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Each reference's resulting workbook, run in the env's sandbox as scoring runs it."""
    from toolbench.core.tasks import tasks_from_records
    from toolbench.envs.sheets import GoogleSheetsEnv, reference_digest

    env = GoogleSheetsEnv(tasks=tasks_from_records(records, "sheets"))
    env._shipped_books = {}  # run every reference, whatever is shipped now
    books = {}
    for task in env.tasks:
        env.reset(options={"task_id": task.id})
        books[task.id] = []
        for index in range(len(task.references)):
            book = env._reference_book(task, index)
            if book is None:
                raise AssertionError(f"{task.id}: reference {index} does not run")
            books[task.id].append({"digest": reference_digest(task, index), "book": book})
    env.close()
    return books


# ---------------------------------------------------------------------- train and unseen
NUMBER_WORDS = {
    2: "two", 3: "three", 4: "four", 5: "five", 10: "ten", 20: "twenty", 30: "thirty", 40: "forty", 50: "fifty",
    60: "sixty", 70: "seventy", 80: "eighty", 90: "ninety", 100: "a hundred",
}  # fmt: skip
#: The held-out templates: operations no demo, test or train task asks for, each with wordings of
#: its own, and the operations (state-changing calls) their references make.
UNSEEN_TEMPLATES = {
    "replace_values": 1,
    "flag_rows": 2,
    "rename_header": 1,
    "swap_columns": 2,
    "blank_column": 1,
    "filtered_tab": 3,
    "count_matches": 2,
    "keep_top": 3,
    "ratio_column": 2,
    "name_of_best": 2,
}
#: Sentences that mention other values of the same kinds, which the task does not ask about. They
#: ask for nothing, so no task's edit (which may touch every row) goes against one.
ASIDES = [
    "The {other} figures were checked yesterday.",
    "{other_key} came up in a meeting earlier; that is a separate matter.",
    "Last week we looked at {other}, but that is done.",
    "My manager mostly cares about {other}, but this is what I need now.",
]


def _value_text(rng: Any, value: Any) -> str:
    """A number as digits or, where it has one, as words."""
    if isinstance(value, int) and value in NUMBER_WORDS and rng.random() < 0.5:
        return NUMBER_WORDS[value]
    return str(value)


class _UnseenMaker:
    """Draws tasks of the held-out templates on the held-out worksheets."""

    def __init__(self, seed: int):
        self.rng = rng_for("sheets", "unseen", seed)

    def make(self, template: str) -> tuple[str, str, str]:
        """(worksheet name, instruction, reference code)."""
        rng = self.rng
        name = rng.choice(sorted(UNSEEN_BOOKS))
        rows = UNSEEN_BOOKS[name]
        text, code = getattr(self, template)(name, rows)
        # An aside names a column and a row the instruction does not, so it only distracts.
        others = [h for h in rows[0][1:] if h not in text] or [None]
        rest = [r[0] for r in rows[1:] if r[0] not in text]
        aside = rng.choice(ASIDES).format(other=rng.choice(others), other_key=f"{rows[0][0]} {rng.choice(rest)}")
        if others[0] is not None and rng.random() < 0.5:
            text = f"{aside} {text}" if rng.random() < 0.5 else f"{text} {aside}"
        return name, text, code

    def replace_values(self, name: str, rows: list[list[Any]]) -> tuple[str, str]:
        rng, c = self.rng, GROUP_COLUMN[name]
        old = rng.choice(sorted({r[c] for r in rows[1:]}))
        new = rng.choice(["Zone " + old[0], old.upper(), old + " Hub", old[:3] + "."])
        column = [[new if r[c] == old else r[c]] for r in rows[1:]]
        text = rng.choice(
            [
                f"Wherever the {rows[0][c]} column says '{old}', it should now say '{new}'.",
                f"'{old}' was renamed to '{new}': fix each {rows[0][c]} entry still using the old name.",
                f"Swap out every occurrence of '{old}' under {rows[0][c]} for '{new}'.",
            ]
        )
        return text, f"worksheet.update({column!r}, '{letter(c + 1)}2:{letter(c + 1)}{len(rows)}')"

    def flag_rows(self, name: str, rows: list[list[Any]]) -> tuple[str, str]:
        rng = self.rng
        c = rng.choice(numeric_columns(rows))
        values = sorted(r[c - 1] for r in rows[1:])
        limit = values[rng.randrange(1, len(values) - 1)]
        header, yes, no = rng.choice([("Busy", "yes", "no"), ("Level", "high", "low"), ("Marker", "Y", "N")])
        flags = [[header]] + [[yes if r[c - 1] > limit else no] for r in rows[1:]]
        column, what = letter(len(rows[0]) + 1), rows[0][c - 1]
        text = rng.choice(
            [
                f"Tag each row in a new column called {header}: '{yes}' when {what} exceeds "
                f"{_value_text(rng, limit)}, otherwise '{no}'.",
                f"I need a {header} column at the right edge. Rows with {what} strictly greater than "
                f"{_value_text(rng, limit)} get '{yes}'; all others get '{no}'.",
            ]
        )
        return text, f"worksheet.update({flags!r}, '{column}1:{column}{len(rows)}')"

    def rename_header(self, name: str, rows: list[list[Any]]) -> tuple[str, str]:
        rng = self.rng
        c = rng.randrange(2, len(rows[0]) + 1)
        old = rows[0][c - 1]
        new = rng.choice([f"{old} (total)", f"{old} 2024", f"Current {old}", f"{old} Count"])
        text = rng.choice(
            [
                f"Retitle column {letter(c)} ('{old}') as '{new}'.",
                f"The heading '{old}' is misleading; call it '{new}' instead.",
                f"Give the {old} column a new label: {new}.",
            ]
        )
        return text, f"worksheet.update_cell(1, {c}, {new!r})"

    def swap_columns(self, name: str, rows: list[list[Any]]) -> tuple[str, str]:
        rng = self.rng
        a, b = sorted(rng.sample(range(2, len(rows[0]) + 1), 2))
        left, right = [[r[b - 1]] for r in rows], [[r[a - 1]] for r in rows]
        text = rng.choice(
            [
                f"Exchange the places of the {rows[0][a - 1]} and {rows[0][b - 1]} columns, headers included.",
                f"I'd like {rows[0][b - 1]} to sit where {rows[0][a - 1]} is now, and vice versa.",
            ]
        )
        n = len(rows)
        return text, (
            f"worksheet.update({left!r}, '{letter(a)}1:{letter(a)}{n}')\n"
            f"worksheet.update({right!r}, '{letter(b)}1:{letter(b)}{n}')"
        )

    def blank_column(self, name: str, rows: list[list[Any]]) -> tuple[str, str]:
        rng = self.rng
        c = rng.choice(numeric_columns(rows))
        text = rng.choice(
            [
                f"Empty out the {rows[0][c - 1]} figures but leave the heading in place.",
                f"Wipe every value below the {rows[0][c - 1]} header (column {letter(c)}); the header stays.",
            ]
        )
        n = len(rows)
        return text, f"worksheet.update([['']] * {n - 1}, '{letter(c)}2:{letter(c)}{n}')"

    def filtered_tab(self, name: str, rows: list[list[Any]]) -> tuple[str, str]:
        rng, c = self.rng, GROUP_COLUMN[name]
        value = rng.choice(sorted({r[c] for r in rows[1:]}))
        title = rng.choice([f"{value} only", f"{value} rows", f"Just {value}"])
        kept = [rows[0]] + [r for r in rows[1:] if r[c] == value]
        text = rng.choice(
            [
                f"Open a fresh tab named '{title}' and copy over the header plus the rows whose {rows[0][c]} "
                f"is {value}.",
                f"Split out the {value} records: a new worksheet '{title}' with the same header and only those rows.",
            ]
        )
        code = f"new = sheet.add_worksheet(title={title!r}, rows=100, cols=26)\nnew.update({kept!r}, 'A1')"
        return text, code

    def count_matches(self, name: str, rows: list[list[Any]]) -> tuple[str, str]:
        rng, c = self.rng, GROUP_COLUMN[name]
        value = rng.choice(sorted({r[c] for r in rows[1:]}))
        col, n = letter(c + 1), len(rows)
        text = rng.choice(
            [
                f"Under the last {rows[0][c]} entry, put a formula that tells how many rows are {value}.",
                f"How many {value} rows are there? Answer with a COUNTIF formula in {col}{n + 1}.",
            ]
        )
        return text, f"worksheet.update([['=COUNTIF({col}2:{col}{n},\"{value}\")']], '{col}{n + 1}', raw=False)"

    def keep_top(self, name: str, rows: list[list[Any]]) -> tuple[str, str]:
        rng = self.rng
        c = rng.choice(numeric_columns(rows))
        values = [r[c - 1] for r in rows[1:]]
        count = rng.choice(
            [k for k in (2, 3, 4) if sorted(values, reverse=True)[k - 1] != sorted(values, reverse=True)[k]]
        )
        cut = sorted(values, reverse=True)[count - 1]
        kept = [rows[0]] + [r for r in rows[1:] if r[c - 1] >= cut]
        text = rng.choice(
            [
                f"Trim the table down to the {_value_text(rng, count)} rows with the biggest {rows[0][c - 1]}, "
                "in their current order.",
                f"Only the top {_value_text(rng, count)} by {rows[0][c - 1]} should remain (keep their order "
                "and the header).",
            ]
        )
        return text, f"worksheet.clear()\nworksheet.update({kept!r}, 'A1')"

    def ratio_column(self, name: str, rows: list[list[Any]]) -> tuple[str, str]:
        rng = self.rng
        a, b = rng.sample(numeric_columns(rows), 2)
        header = f"{rows[0][a - 1]} per {rows[0][b - 1]}"
        col, n = letter(len(rows[0]) + 1), len(rows)
        if any(r[b - 1] == 0 for r in rows[1:]):
            a, b = b, a
            header = f"{rows[0][a - 1]} per {rows[0][b - 1]}"
        text = rng.choice(
            [
                f"Divide {rows[0][a - 1]} by {rows[0][b - 1]} for every row, in a new column '{header}'.",
                f"What is each row's {rows[0][a - 1]}-to-{rows[0][b - 1]} ratio? Put it under a new heading "
                f"'{header}' at the end.",
            ]
        )
        code = (
            f"worksheet.update([[{header!r}]] + [[f'={letter(a)}{{r}}/{letter(b)}{{r}}'] for r in range(2, {n + 1})], "
            f"'{col}1', raw=False)"
        )
        return text, code

    def name_of_best(self, name: str, rows: list[list[Any]]) -> tuple[str, str]:
        rng = self.rng
        c = rng.choice(numeric_columns(rows))
        values = [r[c - 1] for r in rows[1:]]
        lowest = rng.random() < 0.5
        pick = min(values) if lowest else max(values)
        if values.count(pick) > 1:
            lowest, pick = not lowest, max(values) if lowest else min(values)
        winner = rows[1:][values.index(pick)][0]
        cell = f"{letter(len(rows[0]) + 2)}2"
        word = "lowest" if lowest else "highest"
        text = rng.choice(
            [
                f"In {cell}, write the {rows[0][0]} that has the {word} {rows[0][c - 1]}.",
                f"Which {rows[0][0]} leads on {rows[0][c - 1]} ({word} wins)? Type its name into cell {cell}.",
            ]
        )
        return text, f"worksheet.update([[{winner!r}]], '{cell}')"


def _unseen_records(size: int, seed: int, avoid: list[str]) -> list[dict[str, Any]]:
    maker, records, seen = _UnseenMaker(seed), [], set()
    templates = list(UNSEEN_TEMPLATES)
    for template in spread(size, templates):
        for _ in range(200):
            name, text, code = maker.make(template)
            prompt = prompt_for(text, name, UNSEEN_BOOKS[name])
            if (name, code) not in seen and not near_duplicates([prompt], avoid):
                break
        seen.add((name, code))
        records.append(_record("unseen", len(records), template, name, prompt, code, UNSEEN_TEMPLATES[template]))
    return records


def _record(
    split: str, index: int, template: str, name: str, prompt: str, code: str, difficulty: int
) -> dict[str, Any]:
    return {
        "id": f"sheets-{split}-{index:04d}",
        "category": template,
        "prompt": prompt,
        "completion": [code],
        "question_sheet_name": name,
        "check_format": template.startswith("format"),
        "template": template,
        "difficulty": difficulty,
    }


def _train_records(size: int, seed: int, held: list[str], answers: frozenset[str]) -> list[dict[str, Any]]:
    """Seen templates on the test set's worksheets and train's own, in more wordings; no task has a
    held-out answer (the code names ``worksheet``, not its data) or a held-out prompt's near twin."""
    maker = _Maker(f"train-{seed}", books={**WORKBOOKS, **TRAIN_BOOKS}, phrasing=rng_for("sheets", "phrasing", seed))
    records: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    labels = iter(spread(size * 50, CATEGORIES))
    while len(records) < size:
        batch = []
        while len(batch) < 2 * (size - len(records)):
            category = next(labels)
            name, text, code, check_format = maker.make(category)
            if code in answers or (name, code) in seen:
                continue
            seen.add((name, code))
            batch.append((category, maker.phrase_index, name, text, code, check_format))
        prompts = [prompt_for(text, name, ALL_BOOKS[name]) for _, _, name, text, _, _ in batch]
        twins = near_duplicates(prompts, held)
        for index, (category, phrasing, name, _, code, check_format) in enumerate(batch):
            if index in twins or len(records) == size:
                continue
            record = _record(
                "train", len(records), category, name, prompts[index], code, SEEN_DIFFICULTY.get(category, 1)
            )
            records.append({**record, "check_format": check_format, "phrasing": phrasing})
    return records


def test_and_demo() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The shipped test and demo sets; a demo never has a test task's answer."""
    test = generate_tasks("test", 70, CATEGORIES)
    answers = frozenset(record["completion"][0] for record in test)
    return test, generate_tasks("demo", 10, CATEGORIES[:10], avoid=answers)


@split_maker("sheets")
def make_split(split: str, size: int, seed: int) -> list[dict[str, Any]]:
    """``size`` tasks of ``split``: ``unseen`` (held-out templates and worksheets) or ``train``."""
    test, demo = test_and_demo()
    if split == "unseen":
        return _unseen_records(size, seed, [r["prompt"] for r in test + demo])
    if split != "train":
        raise ValueError(f"no generated split {split!r}")
    unseen = _unseen_records(SHIPPED_SIZES["unseen"], SHIPPED_SEED, [r["prompt"] for r in test + demo])
    held = [r["prompt"] for r in test + unseen]
    answers = frozenset(r["completion"][0] for r in test + demo + unseen)
    return _train_records(size, seed, held, answers)
