"""Rejections raised by the shared core.

Every rejection is a ``ValueError`` (the adapter contract counts ``ValueError`` and
``TypeError`` as clean rejections) and names the requirement it rests on, so a
conformance failure message can cite it.
"""

from __future__ import annotations


class Rejection(ValueError):
    """A clean rejection of a configuration, chunk or stream, citing a requirement ID."""

    def __init__(self, requirement: str, message: str) -> None:
        super().__init__(f"{message} [{requirement}]")
        self.requirement = requirement
        self.reason = message


class ConfigError(Rejection):
    """The codec object is not a valid ``jpeg`` configuration."""


class Unsupported(Rejection):
    """A valid configuration or chunk that this backend cannot handle correctly (optional feature)."""


class ChunkError(Rejection):
    """The chunk cannot be encoded under this configuration."""


class StreamError(Rejection):
    """The stream cannot be decoded into this chunk."""
