"""``toolbench record``: play one episode and save what the camera saw (``toolbench.eval.recording``)."""

from toolbench.eval.recording import run as cmd_record

__all__ = ["cmd_record"]
