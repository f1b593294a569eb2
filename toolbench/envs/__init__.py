"""The environments, one module per task family (each registered with gymnasium by ``toolbench``)."""

#: The env modules whose actions are code: each holds the code-side names (``code_names``,
#: ``code_collect``) that the sandbox's clean worker imports before it forks. Every code env starts
#: the worker with this one list (``sandbox.start_worker``), so a process has one worker, whichever
#: env starts it first.
CODE_ENV_MODULES = ("toolbench.envs.sheets", "toolbench.envs.tabletop")
