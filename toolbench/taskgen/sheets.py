"""Google Sheets workbooks and task sets.

Six small business-style worksheets; 70 test tasks and 10 demonstrations over the benchmark's
use cases: updating values, formulas (sums below a column...), sorting, adding and deleting rows
and columns, merging, filtering, formatting, pivot tables, and pandas manipulations through
gspread-dataframe. References use the gspread 6 API (values first, then the range).
"""

from __future__ import annotations

from typing import Any

from toolbench.envs.sheets import prompt_for
from toolbench.taskgen import Files, aligner, generator, jsonl, rng_for, spread

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
KEY = {"Products": 0, "Sales": None, "Inventory": 1, "Grades": 0, "Employees": 0, "Expenses": 0}
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


def letter(index: int) -> str:
    """Column letter of a 1-based index (A..Z is enough for these worksheets)."""
    return chr(ord("A") + index - 1)


def table_text(rows: list[list[Any]]) -> str:
    return "\n".join("| " + " | ".join(str(v) for v in row) + " |" for row in rows)


def numeric_columns(rows: list[list[Any]]) -> list[int]:
    return [i + 1 for i, v in enumerate(rows[1]) if isinstance(v, (int, float)) and not isinstance(v, bool)]


def text_columns(rows: list[list[Any]]) -> list[int]:
    return [i + 1 for i, v in enumerate(rows[1]) if isinstance(v, str)]


class _Maker:
    def __init__(self, split: str):
        self.rng = rng_for("sheets", "tasks", split)

    def workbook(self, needs_key: bool = False) -> tuple[str, list[list[Any]]]:
        names = [n for n in WORKBOOKS if not needs_key or KEY[n] is not None]
        name = self.rng.choice(names)
        return name, WORKBOOKS[name]

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
            return name, text, code, False
        if category == "formula_total":
            c = rng.choice(numeric_columns(rows))
            col, label = letter(c), rows[0][c - 1]
            function, words = rng.choice(
                [("SUM", "the total"), ("AVERAGE", "the average"), ("MAX", "the largest"), ("MIN", "the smallest")]
            )
            text = f"In the cell just below the last {label} value, add a formula that computes {words} {label}."
            code = f"worksheet.update([['={function}({col}2:{col}{n})']], '{col}{n + 1}', raw=False)"
            return name, text, code, False
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
            return name, text, f"worksheet.sort(({c}, '{order}'), range='A2:{last}{n}')", False
        if category == "append_row":
            new = self.new_row(name, rows)
            text = "Add this row at the end of the table: " + ", ".join(f"{h}: {v}" for h, v in zip(rows[0], new)) + "."
            return name, text, f"worksheet.append_row({new!r})", False
        if category == "insert_row":
            r = rng.randint(2, n)
            new = self.new_row(name, rows)
            text = (
                f"Insert this row just above the row for {self.row_label(name, rows, r)}: "
                + ", ".join(f"{h}: {v}" for h, v in zip(rows[0], new))
                + "."
            )
            return name, text, f"worksheet.insert_row({new!r}, index={r})", False
        if category == "delete_rows":
            r = rng.randint(2, n)
            text = rng.choice(
                [
                    f"Delete the row for {self.row_label(name, rows, r)}.",
                    f"Remove {self.row_label(name, rows, r)} from the sheet.",
                ]
            )
            return name, text, f"worksheet.delete_rows({r})", False
        if category == "delete_columns":
            c = rng.randint(2, width)
            text = rng.choice([f"Delete the {rows[0][c - 1]} column.", f"Remove the column {rows[0][c - 1]}."])
            return name, text, f"worksheet.delete_columns({c})", False
        if category == "insert_column":
            c = rng.randint(2, width)
            header = rng.choice(["Comment", "Owner", "Flag"])
            text = f"Insert a new column titled '{header}' just before the {rows[0][c - 1]} column."
            return name, text, f"worksheet.insert_cols([['{header}']], {c})", False
        if category == "merge":
            title = f"{name} report"
            text = (
                f"Insert a new first row holding the title '{title}' in A1, then merge A1 through "
                f"{last}1 so the title spans the table."
            )
            code = f"worksheet.insert_row(['{title}'], index=1)\nworksheet.merge_cells('A1:{last}1')"
            return name, text, code, False
        if category == "filter":
            text = f"Turn on a basic filter over the table's range A1:{last}{n}."
            return name, text, f"worksheet.set_basic_filter('A1:{last}{n}')", False
        if category == "format":
            return self.formatting(name, rows)
        if category == "pivot":
            return self.pivot()
        if category == "pandas":
            return self.pandas()
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
        code = (
            "sheet.batch_update({'requests': [{'updateCells': {\n"
            "    'rows': [{'values': [{'pivotTable': {\n"
            f"        'source': {{'sheetId': worksheet.id, 'startRowIndex': 0, 'endRowIndex': {len(rows)}, "
            f"'startColumnIndex': 0, 'endColumnIndex': {len(rows[0])}}},\n"
            f"        'rows': [{{'sourceColumnOffset': {group - 1}, 'showTotals': True, 'sortOrder': 'ASCENDING'}}],\n"
            f"        'values': [{{'summarizeFunction': '{function}', 'sourceColumnOffset': {value - 1}}}]}}}}]}}],\n"
            f"    'start': {{'sheetId': worksheet.id, 'rowIndex': 0, 'columnIndex': {anchor - 1}}},\n"
            "    'fields': 'pivotTable'}}]})"
        )
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

    test = generate_tasks("test", 70, CATEGORIES)
    answers = frozenset(record["completion"][0] for record in test)
    demo = generate_tasks("demo", 10, CATEGORIES[:10], avoid=answers)
    files = {
        "workbooks.json": json.dumps(WORKBOOKS, indent=1) + "\n",
        "test.jsonl": jsonl(test),
        "demo.jsonl": jsonl(demo),
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
