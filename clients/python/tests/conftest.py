"""Fixtures for the tests against a live GenGate.

The root test (test/clients/python.test.ts) starts the servers and sets, besides GENGATE_BASE_URL and
GENGATE_API_KEY: GENGATE_WEBHOOK_SECRET (the key's account), GENGATE_POOR_API_KEY (an account with no
money), GENGATE_IDLE_BASE_URL/_API_KEY (a server whose engine does not run: tasks stay waiting),
GENGATE_LIMITED_BASE_URL/_API_KEY (2 writes and 3 reads per second) and GENGATE_TEST_MEDIA (a folder
with photo.jpg, clip.mp4, clip.mov and song.mp3, 3 s each).
"""

from __future__ import annotations

import http.server
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gengate import GenGate  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]


def need(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run these tests through `npx vitest run test/clients/python.test.ts`, which starts GenGate")
    return value


@pytest.fixture(scope="session")
def env() -> Dict[str, str]:
    names = ["GENGATE_BASE_URL", "GENGATE_API_KEY", "GENGATE_WEBHOOK_SECRET", "GENGATE_POOR_API_KEY", "GENGATE_IDLE_BASE_URL",
             "GENGATE_IDLE_API_KEY", "GENGATE_LIMITED_BASE_URL", "GENGATE_LIMITED_API_KEY", "GENGATE_TEST_MEDIA"]
    return {n: need(n) for n in names}


@pytest.fixture()
def gg(env: Dict[str, str]) -> Iterator[GenGate]:
    with GenGate(api_key=env["GENGATE_API_KEY"], base_url=env["GENGATE_BASE_URL"]) as client:
        yield client


@pytest.fixture()
def idle(env: Dict[str, str]) -> Iterator[GenGate]:
    with GenGate(api_key=env["GENGATE_IDLE_API_KEY"], base_url=env["GENGATE_IDLE_BASE_URL"]) as client:
        yield client


@pytest.fixture(scope="session")
def media(env: Dict[str, str]) -> Path:
    return Path(env["GENGATE_TEST_MEDIA"])


class Receiver:
    """A webhook receiver on 127.0.0.1 that records every delivery (headers and raw body) and answers 200."""

    def __init__(self) -> None:
        self.received: List[Dict[str, Any]] = []
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                receiver.received.append({"path": self.path, "headers": dict(self.headers.items()), "body": raw})
                self.send_response(200)
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def wait_for(self, path: str, timeout: float = 20.0) -> Dict[str, Any]:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for r in self.received:
                if r["path"] == path:
                    return r
            time.sleep(0.05)
        raise AssertionError(f"no delivery to {path} within {timeout} s (got {[r['path'] for r in self.received]})")

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="session")
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()
