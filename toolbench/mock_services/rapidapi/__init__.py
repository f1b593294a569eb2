"""The RapidAPI tool hub of ToolLLM's tasks: the world (``world.py``), its tools and APIs
(``catalog.py``, ``domains.py``, ``services``), ToolBench's function schemas and step rules
(``functions.py``, ``steps.py``), the pass rule (``passrule.py``), the original data
(``original.py``), and the served protocols (``virtual.py``, ``gateway.py``)."""

#: ToolBench's six test sets, in its order (this module stays light: ``toolbench list`` imports it).
TEST_SETS = ("G1_instruction", "G1_category", "G1_tool", "G2_instruction", "G2_category", "G3_instruction")
