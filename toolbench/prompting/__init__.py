"""Prompt building for program and interactive agents: the API docs and demonstrations most relevant
to a task (``builder``), and the per-task generation settings of ToolBench's harness (``defaults``).

It sits below the agents, which build their prompts with it, and above the envs and task
generators whose texts it formats.
"""

from __future__ import annotations

from toolbench.prompting.builder import (
    DEMO_OBSERVATION_CHARS,
    FENCE,
    PROMPT_SETTINGS,
    SEPARATOR,
    Matcher,
    PromptBuilder,
    answer_format,
    finishing_words,
    format_demo,
    format_interactive_demo,
    interaction_rules,
    role_statement,
    split_api_docs,
    tokenize,
)
from toolbench.prompting.defaults import HARNESS_STOP, GenerationDefaults, generation_defaults

__all__ = [
    "DEMO_OBSERVATION_CHARS",
    "FENCE",
    "HARNESS_STOP",
    "PROMPT_SETTINGS",
    "SEPARATOR",
    "GenerationDefaults",
    "Matcher",
    "PromptBuilder",
    "answer_format",
    "finishing_words",
    "format_demo",
    "format_interactive_demo",
    "generation_defaults",
    "interaction_rules",
    "role_statement",
    "split_api_docs",
    "tokenize",
]
