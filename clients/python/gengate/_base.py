"""What the sync and async clients share: settings, request building, answer decoding, retry and wait policy.

The two clients differ only in how they send a request and sleep; every rule lives here once.
"""

from __future__ import annotations

import os
import random
import uuid
from dataclasses import dataclass
from typing import IO, Any, Callable, Dict, Mapping, Optional, Tuple, Union

import httpx

from . import errors
from .models import Task

__version__ = "0.1.0"

DEFAULT_BASE_URL = "http://127.0.0.1:8080"
USER_AGENT = f"gengate-python/{__version__}"

#: Statuses worth another try of a request that is safe to repeat (GETs, createTask with its key).
RETRY_STATUSES = (500, 502, 503, 504)
#: The longest a single Retry-After is honoured before giving up on the retries (seconds).
MAX_RETRY_AFTER = 60.0

FileInput = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, IO[bytes]]
ProgressCallback = Callable[[Task], Any]


@dataclass(frozen=True)
class Settings:
    api_key: str
    base_url: str
    pricing_base_url: str
    timeout: float
    max_retries: int


def settings(
    api_key: Optional[str], base_url: Optional[str], pricing_base_url: Optional[str], timeout: float, max_retries: int
) -> Settings:
    """The client's settings; the key and addresses fall back to GENGATE_API_KEY, GENGATE_BASE_URL, GENGATE_PRICING_BASE_URL."""
    key = api_key if api_key is not None else os.environ.get("GENGATE_API_KEY", "")
    base = _address(base_url or os.environ.get("GENGATE_BASE_URL") or DEFAULT_BASE_URL)
    pricing = _address(pricing_base_url or os.environ.get("GENGATE_PRICING_BASE_URL") or base)
    if max_retries < 0:
        raise ValueError(f"max_retries must be a whole number 0 or more (got {max_retries!r})")
    return Settings(api_key=key, base_url=base, pricing_base_url=pricing, timeout=timeout, max_retries=max_retries)


def _address(url: str) -> str:
    """The server's address without a trailing slash or ``/api/v1`` (both forms are accepted)."""
    url = url.rstrip("/")
    if url.endswith("/api/v1"):
        url = url[: -len("/api/v1")]
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"base_url must be an http:// or https:// address (got {url!r})")
    return url


def headers(s: Settings) -> Dict[str, str]:
    h = {"user-agent": USER_AGENT, "accept": "application/json"}
    if s.api_key:
        h["authorization"] = f"Bearer {s.api_key}"
    return h


def new_idempotency_key() -> str:
    return f"gg-py-{uuid.uuid4().hex}"


def create_body(model: str, input: Mapping[str, Any], callback_url: Optional[str]) -> Dict[str, Any]:
    if not isinstance(model, str) or not model:
        raise ValueError(f"model must be a model id or alias such as 'nano-banana-2' (got {model!r})")
    body: Dict[str, Any] = {"model": model, "input": dict(input)}
    if callback_url:
        body["callBackUrl"] = callback_url
    return body


def list_params(state: Optional[str], limit: Optional[int], before: Optional[int]) -> Dict[str, Any]:
    params: Dict[str, Any] = {}
    if state is not None:
        params["state"] = state
    if limit is not None:
        params["limit"] = limit
    if before is not None:
        params["before"] = before
    return params


def price_params(model: str, params: Mapping[str, Any]) -> Dict[str, str]:
    """Query of ``/v1/pricing/calculate``: booleans as ``true``/``false``, None left out."""
    out = {"model": model}
    for k, v in params.items():
        if v is None:
            continue
        out[k] = ("true" if v else "false") if isinstance(v, bool) else str(v)
    return out


def decode(response: httpx.Response) -> Any:
    """The answer's ``data`` (REST envelope) or whole body (price calculator), or raises its exception."""
    try:
        body: Any = response.json()
    except ValueError:
        body = response.text
    if response.status_code >= 400 or (isinstance(body, dict) and body.get("ok") is False):
        raise errors.error_from_response(response.status_code, body, response.headers)
    if isinstance(body, dict) and "code" in body and "msg" in body and "data" in body:
        return body["data"]
    return body


def retry_delay(response: Optional[httpx.Response], attempt: int, safe: bool) -> Optional[float]:
    """How long to wait before trying again, or None to stop.

    A 429 is always retried (the server did nothing) after its Retry-After; a connection failure
    (``response`` None) or a 5xx only when the request is ``safe`` to repeat, with exponential backoff.
    """
    if response is not None and response.status_code == 429:
        after = errors.retry_after_seconds(response.headers)
        if after is not None and after > MAX_RETRY_AFTER:
            return None
        return after if after is not None else backoff(attempt)
    if not safe:
        return None
    if response is None or response.status_code in RETRY_STATUSES:
        return backoff(attempt)
    return None


def backoff(attempt: int, base: float = 0.5, cap: float = 8.0) -> float:
    """Exponential backoff with jitter: about base·2^attempt, at most ``cap`` seconds."""
    return min(cap, base * (2**attempt)) * (0.5 + random.random() / 2)


class Poll:
    """The wait loop's schedule: checks every 0.5 s at first, slowing by 1.5× to ``max_interval``;
    a 429 met while waiting sleeps its Retry-After instead (the clients retry that request)."""

    def __init__(self, interval: float = 0.5, max_interval: float = 5.0) -> None:
        self.next = interval
        self.max = max_interval

    def delay(self, remaining: float) -> float:
        d = min(self.next, max(0.0, remaining))
        self.next = min(self.max, self.next * 1.5)
        return d


def progress_changed(before: Optional[Task], now: Task) -> bool:
    return before is None or before.state != now.state or before.progress != now.progress


def task_failed(task: Task) -> errors.TaskFailedError:
    kind = task.error.type if task.error else None
    exc = errors.TaskFailedError(task.fail_code or 0, kind, task.fail_msg or "the task failed", None, task.raw.get("error"), task.raw)
    exc.task = task
    return exc


def upload_part(file: FileInput, filename: Optional[str], content_type: Optional[str]) -> Tuple[Tuple[str, Any, str], Callable[[], None], Callable[[], bool]]:
    """The multipart ``file`` part of an upload, a closer for a file this opened, and a rewinder for a retry.

    A path is opened here (and closed by the closer); bytes are sent as they are; a file object is
    read from where it stands, and rewound there for a retry when it can seek.
    """
    ctype = content_type or "application/octet-stream"
    if isinstance(file, (str, os.PathLike)):
        path = os.fspath(file)
        handle = open(path, "rb")
        name = filename or os.path.basename(path)
        return (name, handle, ctype), handle.close, _rewinder(handle)
    if isinstance(file, (bytes, bytearray, memoryview)):
        return (filename or "upload", bytes(file), ctype), lambda: None, lambda: True
    if hasattr(file, "read"):
        name = filename or os.path.basename(str(getattr(file, "name", "") or "")) or "upload"
        return (name, file, ctype), lambda: None, _rewinder(file)
    raise TypeError(f"file must be a path, bytes or a binary file object (got {type(file).__name__})")


def _rewinder(handle: Any) -> Callable[[], bool]:
    try:
        start = handle.tell()
    except (AttributeError, OSError, ValueError):
        return lambda: False

    def rewind() -> bool:
        try:
            handle.seek(start)
            return True
        except (AttributeError, OSError, ValueError):
            return False

    return rewind
