"""The RapidAPI-style tool hub of ToolLLM's tasks (issue 14, being built): so far, ToolBench's rules for
turning APIs into function-calling schemas and observations (``functions.py``) and for reading a
step's function call (``steps.py``)."""
