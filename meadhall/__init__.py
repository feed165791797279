"""Meadhall: a self-hosted team chat service."""

__version__ = "1.0.0"
