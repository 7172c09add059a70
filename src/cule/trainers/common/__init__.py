"""Tested building blocks shared by the trainers (shapes documented as [T, B] = time x batch, [K] = sampled)."""
from .gae import gae
from .targets import c51_projection, n_step_return
from .vtrace import vtrace

__all__ = ["gae", "vtrace", "n_step_return", "c51_projection"]
