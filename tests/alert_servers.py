"""Real servers on 127.0.0.1 for the alert tests: an HTTP server (the standard library's)
whose answer a test sets, and an SMTP server (aiosmtpd) that keeps what it receives."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email import message_from_bytes
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from aiosmtpd.controller import Controller


@dataclass
class Received:
    """One request the HTTP server took."""

    path: str
    key: str | None
    body: dict[str, Any]


@dataclass
class HookServer:
    """What the server answers (``status``; ``hang``: never, until the test ends) and what it took."""

    url: str
    status: int = 200
    hang: bool = False
    #: Seconds to wait after taking a request before answering it (a slow receiver).
    delay: float = 0.0
    received: list[Received] = field(default_factory=list)
    released: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def idempotency_keys(self) -> list[str | None]:
        with self.lock:
            return [r.key for r in self.received]


def _handler(hook: HookServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            if hook.hang:
                hook.released.wait(30)  # the client's timeout ends it first
                return
            with hook.lock:
                hook.received.append(Received(self.path, self.headers.get("Idempotency-Key"), body))
            if hook.delay:
                hook.released.wait(hook.delay)
            try:
                self.send_response(hook.status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")
            except (BrokenPipeError, ConnectionResetError):
                pass  # the sender was killed waiting for the answer

        def log_message(self, *_args: Any) -> None:
            pass

    return Handler


@contextmanager
def hook_server() -> Iterator[HookServer]:
    """An HTTP server on a free port of 127.0.0.1, stopped at the end."""
    hook = HookServer(url="")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(hook))
    server.daemon_threads = True
    hook.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield hook
    finally:
        hook.released.set()
        server.shutdown()
        server.server_close()


@dataclass
class MailBox:
    """What the SMTP server received."""

    port: int
    messages: list[Message] = field(default_factory=list)
    envelopes: list[tuple[str, list[str]]] = field(default_factory=list)


class _Keeper:
    def __init__(self, box: MailBox) -> None:
        self.box = box

    async def handle_DATA(self, _server: Any, _session: Any, envelope: Any) -> str:
        self.box.envelopes.append((envelope.mail_from, list(envelope.rcpt_tos)))
        self.box.messages.append(message_from_bytes(envelope.original_content or envelope.content))
        return "250 queued"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def smtp_server() -> Iterator[MailBox]:
    """An SMTP server on a free port of 127.0.0.1 that keeps every message, stopped at the end."""
    box = MailBox(port=free_port())
    controller = Controller(_Keeper(box), hostname="127.0.0.1", port=box.port)
    controller.start()
    try:
        yield box
    finally:
        controller.stop()
