"""What each ``toolbench`` command does: one module per command or group of commands, each with a
``cmd_*`` function per command that ``toolbench.cli``'s parser calls with the parsed arguments.

The commands sit above every other layer (they print, read flags and tie the eval, the services and
the data tools together); the command line itself only parses arguments and dispatches.
"""
