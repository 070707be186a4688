"""Loopback receivers of the desk's alerts: a webhook receiver (a real HTTP server on 127.0.0.1 that can answer
503 for its first requests, as a receiver in an outage does) and a minimal SMTP server that keeps the mails it is
handed. Both record exactly what arrived, for the tests to check by their own means (the HMAC recomputed with
hmac/hashlib, the mail parsed with the email package).
"""

from __future__ import annotations

import socketserver
import threading
from dataclasses import dataclass, field
from email import message_from_bytes
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Received:
    """One request as it arrived: its path, headers and raw body."""

    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class WebhookReceiver:
    """A webhook receiver on loopback. `fail_first`: answer this many requests with `fail_status` before accepting."""

    fail_first: int = 0
    fail_status: int = 503
    port: int = 0
    received: list[Received] = field(default_factory=list)
    """Every request, refused ones included."""
    _server: ThreadingHTTPServer | None = None

    def start(self) -> WebhookReceiver:
        """Listen (on `port`, or a free one) and serve on a daemon thread."""
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            disable_nagle_algorithm = True  # the reply's two writes go out at once (tests/support/messages_api.py)

            def do_POST(self) -> None:  # noqa: N802 - the http.server name
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                receiver.received.append(Received(self.path, dict(self.headers.items()), raw))
                refused = len(receiver.received) <= receiver.fail_first
                self.send_response(receiver.fail_status if refused else 200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"no" if refused else b"ok")

            def log_message(self, *_args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def url(self, path: str = "/hook/T0KEN-in-the-path") -> str:
        """The hook's address (its path stands for the token a Slack or Teams address carries)."""
        return f"http://127.0.0.1:{self.port}{path}"

    def accepted(self) -> list[Received]:
        """The requests answered 200."""
        return self.received[self.fail_first :]

    def stop(self) -> None:
        """Stop serving and free the port."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


@dataclass
class SmtpReceiver:
    """A minimal SMTP server on loopback (no TLS, no auth): HELO/EHLO, MAIL, RCPT, DATA, QUIT."""

    mails: list[Message] = field(default_factory=list)
    envelopes: list[tuple[str, list[str]]] = field(default_factory=list)
    port: int = 0
    _server: socketserver.ThreadingTCPServer | None = None

    def start(self) -> SmtpReceiver:
        """Listen on a free port and serve on a daemon thread."""
        receiver = self

        class Handler(socketserver.StreamRequestHandler):
            def reply(self, line: str) -> None:
                self.wfile.write(f"{line}\r\n".encode())

            def handle(self) -> None:
                self.reply("220 loopback SMTP")
                sender, rcpts = "", []
                while line := self.rfile.readline():
                    verb = line.decode(errors="replace").strip()
                    upper = verb.upper()
                    if upper.startswith(("EHLO", "HELO")):
                        self.reply("250 loopback")
                    elif upper.startswith("MAIL FROM:"):
                        sender, rcpts = verb[10:].strip(" <>"), []
                        self.reply("250 OK")
                    elif upper.startswith("RCPT TO:"):
                        rcpts.append(verb[8:].strip(" <>"))
                        self.reply("250 OK")
                    elif upper == "DATA":
                        self.reply("354 end with .")
                        data = b""
                        while (chunk := self.rfile.readline()) not in (b".\r\n", b""):
                            data += chunk[1:] if chunk.startswith(b"..") else chunk
                        receiver.mails.append(message_from_bytes(data))
                        receiver.envelopes.append((sender, rcpts))
                        self.reply("250 queued")
                    elif upper == "QUIT":
                        self.reply("221 bye")
                        return
                    else:
                        self.reply("250 OK")

        class Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

        self._server = Server(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        """Stop serving."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
