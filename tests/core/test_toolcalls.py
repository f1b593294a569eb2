"""Tool calls written as JSON actions (core.toolcalls)."""

import pytest

from toolbench.core.toolcalls import RUN_CODE, ToolCallError, code_cell, parse_tool_call, tool_call_action


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "f", "arguments": {"x": 1}}',
        '{"name": "f", "arguments": "{\\"x\\": 1}"}',
        '{"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{\\"x\\": 1}"}}',
        '[{"name": "f", "parameters": {"x": 1}}]',
        '{"name": "f", "input": {"x": 1}}',
    ],
)
def test_the_shapes_models_write(text):
    call = parse_tool_call(text)
    assert call.name == "f" and call.arguments == {"x": 1}


@pytest.mark.parametrize(
    "text, message",
    [
        ("{not json", "not valid JSON"),
        ('{"arguments": {}}', "must look like"),
        ('{"name": "f", "arguments": [1]}', "must be a JSON object"),
        ('[{"name": "f"}, {"name": "g"}]', "one tool call per step, got 2"),
        ('{"name": "f", "arguments": "{bad"}', "arguments are not valid JSON"),
    ],
)
def test_malformed_tool_calls_name_the_problem(text, message):
    with pytest.raises(ToolCallError, match=message):
        parse_tool_call(text)


def test_code_cells_and_their_tools():
    assert code_cell("x = 1", "submit") == "x = 1"
    assert code_cell(" Submit ", "submit") is None
    assert code_cell('{"name": "submit"}', "submit") is None
    assert code_cell(tool_call_action(RUN_CODE, '{"code": "print(1)"}'), "submit") == "print(1)"
    fenced = '```json\n{"name": "run_code", "arguments": {"code": "y = 2"}}\n```'
    assert code_cell(fenced, "submit") == "y = 2"
    with pytest.raises(ToolCallError, match="unknown tool 'rm'"):
        code_cell('{"name": "rm", "arguments": {}}', "submit")
    with pytest.raises(ToolCallError, match="one tool call per step"):
        code_cell('[{"name": "run_code"}, {"name": "submit"}]', "submit")
    with pytest.raises(ToolCallError, match="takes one argument"):
        code_cell('{"name": "run_code", "arguments": {"code": 5}}', "submit")
    assert code_cell("{'a': 1}", "submit") == "{'a': 1}"  # a Python dict display is code, not JSON
