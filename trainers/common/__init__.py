"""Tested building blocks shared by the trainers (shapes documented as [T, B] = time x batch)."""
from .gae import gae
from .vtrace import vtrace

__all__ = ["gae", "vtrace"]
