"""Thin adapters from toolbench envs to RL trainers; each needs its trainer's optional extra."""
