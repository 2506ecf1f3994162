"""Metrics: information loss and disclosure risk of a release, as Python floats."""

from __future__ import annotations

from .risk import dld_risk
from .utility import group_size_summary, information_loss, sse, sst

__all__ = ["dld_risk", "group_size_summary", "information_loss", "sse", "sst"]
