"""Request bodies read with a size limit: plain forms, and multipart uploads streamed to the
session's private folder (never spooled elsewhere, never named after the browser's file name).

A body that is not a complete multipart form (a part header over its limit, no boundary
where one must be, cut short) is answered 400 with what is wrong; a refused upload's file is
removed at once.
"""

from __future__ import annotations

import pathlib
import secrets
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, cast
from urllib.parse import parse_qsl

from python_multipart.exceptions import FormParserError
from python_multipart.multipart import MultipartParser, parse_options_header
from starlette.requests import Request

__all__ = ["FORM_LIMIT", "PART_HEADER_LIMIT", "BadForm", "TooLarge", "Upload", "read_form",
           "receive_upload"]

FORM_LIMIT = 1024 * 1024
"""Largest body of a form without a file, and of a text field of an upload form (1 MB)."""
PART_HEADER_LIMIT = 4096
"""Largest header line of a part of an upload form, its file name included (4 KB)."""


class BadForm(Exception):
    """A POST that is not the form its page sends (answered 400)."""


class TooLarge(Exception):
    """A body over its limit (answered 413; the partial file is removed)."""


@dataclass
class Upload:
    """A received multipart form: its text fields and its file (if any).

    Used as a context manager, the file is removed at the end of the block unless it was
    moved elsewhere (:attr:`path` set to ``None``).
    """

    fields: dict[str, str] = field(default_factory=dict)
    path: pathlib.Path | None = None
    """Where the file was written (a random name in the session folder)."""
    filename: str | None = None
    """The browser's file name, for display only."""

    def discard(self) -> None:
        """Remove the received file."""
        if self.path is not None:
            self.path.unlink(missing_ok=True)
            self.path = None

    def __enter__(self) -> Upload:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.discard()


def _too_large(what: str, limit: int) -> TooLarge:
    return TooLarge(f"413: the {what} is larger than the limit of {limit:,} bytes "
                    f"({limit / 1024**2:.1f} MB; `microagg serve --max-upload-mb` sets it).")


async def read_form(request: Request, limit: int = FORM_LIMIT) -> dict[str, str]:
    """The fields of an urlencoded form (the last value of a repeated name)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise _too_large("form", limit)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise _too_large("form", limit)
    return dict(parse_qsl(body.decode("utf-8", errors="replace"), keep_blank_values=True))


class _Receiver:
    """python-multipart callbacks writing file parts to ``folder``, within ``limit``."""

    def __init__(self, folder: pathlib.Path, limit: int) -> None:
        self.folder, self.limit, self.size = folder, limit, 0
        self.upload = Upload()
        self.complete = False
        """Whether the form's closing boundary was read."""
        self._headers: dict[bytes, bytes] = {}
        self._field, self._value = b"", b""
        self._name: str | None = None
        self._text: bytearray | None = None
        self._file: Any = None

    def callbacks(self) -> dict[str, Any]:
        return {"on_header_field": self._header_field, "on_header_value": self._header_value,
                "on_header_end": self._header_end, "on_headers_finished": self._headers_done,
                "on_part_data": self._data, "on_part_end": self._part_end,
                "on_end": self._end}

    def _header_field(self, data: bytes, start: int, end: int) -> None:
        self._field += data[start:end]
        self._check_header()

    def _header_value(self, data: bytes, start: int, end: int) -> None:
        self._value += data[start:end]
        self._check_header()

    def _check_header(self) -> None:
        if len(self._field) + len(self._value) > PART_HEADER_LIMIT:
            name = self._field.decode("utf-8", errors="replace")[:40]
            raise BadForm(f"400 Bad Request: a header of a part of the form ({name!r}) is "
                          f"longer than {PART_HEADER_LIMIT:,} bytes; a file's name, sent in "
                          "one, must be shorter: rename the file and send it again.")

    def _end(self) -> None:
        self.complete = True

    def _header_end(self) -> None:
        self._headers[self._field.lower()] = self._value
        self._field, self._value = b"", b""

    def _headers_done(self) -> None:
        _, options = parse_options_header(self._headers.get(b"content-disposition", b""))
        self._headers = {}
        self._name = options.get(b"name", b"").decode("utf-8", errors="replace")
        filename = options.get(b"filename")
        if filename is None:
            self._text = bytearray()
        elif self.upload.path is None:  # one file per form; a second one is ignored
            self.upload.filename = filename.decode("utf-8", errors="replace")
            self.upload.path = self.folder / f"upload-{secrets.token_hex(8)}"
            self._file = self.upload.path.open("wb")

    def _data(self, data: bytes, start: int, end: int) -> None:
        if self._text is not None:
            self._text += data[start:end]
            if len(self._text) > FORM_LIMIT:
                raise _too_large("form field", FORM_LIMIT)
        elif self._file is not None:
            self.size += end - start
            if self.size > self.limit:
                raise _too_large("upload", self.limit)
            self._file.write(data[start:end])

    def _part_end(self) -> None:
        if self._text is not None and self._name:
            self.upload.fields[self._name] = self._text.decode("utf-8", errors="replace")
        self._text = None
        self.close()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


async def receive_upload(request: Request, folder: pathlib.Path, limit: int) -> Upload:
    """Stream a multipart form's file to ``folder`` (at most ``limit`` bytes).

    Raises
    ------
    TooLarge
        Beyond the limit (judged from Content-Length first, then while reading); nothing
        is kept.
    BadForm
        If the body is not a complete multipart form (a part header longer than
        :data:`PART_HEADER_LIMIT`, a boundary missing, the body cut short); nothing is kept.
    """
    kind, options = parse_options_header(request.headers.get("content-type", ""))
    boundary = options.get(b"boundary")
    if kind != b"multipart/form-data" or not boundary:
        raise BadForm("400 Bad Request: the form must be sent as multipart/form-data with a "
                      "file.")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit + FORM_LIMIT:
        raise _too_large("upload", limit)
    receiver = _Receiver(folder, limit)
    try:
        await _parse(request, boundary, receiver)
    except BaseException:
        receiver.close()
        receiver.upload.discard()
        raise
    receiver.close()
    return receiver.upload


async def _parse(request: Request, boundary: bytes, receiver: _Receiver) -> None:
    """Feed the body to python-multipart; its parse errors and an unfinished form raised as
    :class:`BadForm`."""
    try:
        parser = MultipartParser(boundary, cast("Any", receiver.callbacks()),
                                 max_header_size=FORM_LIMIT)  # the receiver checks first
        async for chunk in request.stream():
            parser.write(chunk)
        parser.finalize()
    except FormParserError as error:
        raise BadForm("400 Bad Request: the body is not a well-formed multipart/form-data "
                      f"form ({error}); send the form from the workbench's page.") from None
    if not receiver.complete:
        raise BadForm("400 Bad Request: the form ended before its closing boundary (the "
                      "upload was cut short?); nothing was kept: send it again.")
