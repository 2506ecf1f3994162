"""The workbench's settings (``microagg serve`` options), fixed for the server's life."""

from __future__ import annotations

import pathlib
import secrets
from dataclasses import dataclass, field

__all__ = ["DEFAULT_MAX_UPLOAD_BYTES", "Settings"]

DEFAULT_MAX_UPLOAD_BYTES = 200 * 1024 * 1024
"""Largest upload accepted by default (200 MB)."""


def _new_token() -> str:
    return secrets.token_urlsafe(32)


@dataclass(frozen=True)
class Settings:
    """Where the workbench listens and what it may touch.

    Attributes
    ----------
    host, port : str, int
        The address it listens on (``127.0.0.1``: this machine only).
    data_dir : pathlib.Path or None
        The only folder whose files the browser may name (SQLite databases); ``None``: none.
    max_upload_bytes : int
        Largest upload, enforced while the file is received (413 beyond).
    token : str
        The access token every request must carry (in the URL once, then a cookie).
    work_dir : pathlib.Path or None
        Where the private (0700) temporary folder is made; ``None``: the system's.
    max_jobs : int
        Releases and sweeps that may run at once, each in its own worker process.
    progress_after : float
        Seconds a form waits for its job before showing the progress page instead.
    session_idle_hours : float
        A session unused for longer is forgotten (its tables and work folder removed).
    """

    host: str = "127.0.0.1"
    port: int = 8765
    data_dir: pathlib.Path | None = None
    max_upload_bytes: int = DEFAULT_MAX_UPLOAD_BYTES
    token: str = field(default_factory=_new_token, repr=False)
    work_dir: pathlib.Path | None = None
    max_jobs: int = 2
    progress_after: float = 1.5
    session_idle_hours: float = 12.0

    @property
    def url(self) -> str:
        """The address to open, with the access token."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/?token={self.token}"
