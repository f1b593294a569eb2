from toolbench.core.replies import code_in_reply


def test_fenced_code_keeps_its_line_numbers_and_drops_the_prose():
    reply = "Here is the code:\n```python\nx = 1\ny = x + 1\n```\nThis moves it."
    assert code_in_reply(reply).split("\n") == ["", "", "x = 1", "y = x + 1", "", ""]


def test_every_fenced_block_is_kept():
    reply = "First:\n```\na = 1\n```\nthen:\n```py\nb = a\n```"
    assert [line for line in code_in_reply(reply).splitlines() if line] == ["a = 1", "b = a"]
    assert code_in_reply(reply).splitlines()[6] == "b = a"


def test_plain_text_is_all_code_and_action_headers_are_blanked():
    assert code_in_reply("Action:\nAPI.search()\n") == "\nAPI.search()"
    assert code_in_reply("x = 1\n  y = 2") == "x = 1\n  y = 2"


def test_an_unclosed_fence_runs_to_the_end():
    assert code_in_reply("Sure.\n```python\nx = 1") == "\n\nx = 1"
