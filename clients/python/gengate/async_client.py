"""The asynchronous client: ``AsyncGenGate(api_key=..., base_url=...)``, the same surface as ``GenGate`` with ``await``."""

from __future__ import annotations

import asyncio
import inspect
import time
from typing import Any, AsyncIterator, Dict, List, Mapping, Optional

import httpx

from . import _base as base
from . import errors
from .models import Balance, CancelResult, CreatedTask, Model, Price, RunResult, Task, TaskPage, UploadedFile


class AsyncGenGate:
    """The asynchronous GenGate client (httpx.AsyncClient); every call is awaited, ``tasks.list`` is an async iterator.

    A GenGate client. ``api_key`` and ``base_url`` default to GENGATE_API_KEY and GENGATE_BASE_URL
    (else ``http://127.0.0.1:8080``); ``base_url`` is the server's address, with or without ``/api/v1``.
    ``pricing_base_url`` is the price host when the operator moved it (PRICING_BASE_URL).
    ``timeout`` is per HTTP request; ``max_retries`` how often a rate-limited request (after its
    Retry-After), a failed connection or a 5xx of a request safe to repeat is tried again.

    >>> async with AsyncGenGate(api_key="gg_...") as gg:
    ...     result = await gg.run("nano-banana-2", {"prompt": "a red fox"})
    ...     print(result.urls, result.cost_usd)
    """

    def __init__(
        self,
        api_key: Optional[str] = None,
        base_url: Optional[str] = None,
        *,
        pricing_base_url: Optional[str] = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        http_client: Optional[httpx.AsyncClient] = None,
    ) -> None:
        self._settings = base.settings(api_key, base_url, pricing_base_url, timeout, max_retries)
        self._own_client = http_client is None
        self._http = http_client or httpx.AsyncClient(timeout=timeout)
        self.tasks = Tasks(self)
        self.files = Files(self)
        self.prices = Prices(self)

    @property
    def base_url(self) -> str:
        return self._settings.base_url

    async def aclose(self) -> None:
        if self._own_client:
            await self._http.aclose()

    async def __aenter__(self) -> "AsyncGenGate":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def run(
        self,
        model: str,
        input: Mapping[str, Any],
        *,
        on_progress: Optional[base.ProgressCallback] = None,
        timeout: Optional[float] = 1320.0,
        callback_url: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> RunResult:
        """Creates a task (with an automatic Idempotency-Key, so a retried create never charges twice),
        waits until it is final and returns its files and cost. Raises :class:`TaskFailedError` when the
        task fails (it was refunded), :class:`WaitTimeoutError` after ``timeout`` seconds (the task goes on)."""
        created = await self.tasks.create(model, input, callback_url=callback_url, idempotency_key=idempotency_key)
        task = await self.tasks.wait(created.task_id, on_progress=on_progress, timeout=timeout)
        if task.state != "success":
            raise base.task_failed(task)
        return RunResult.from_task(task)

    async def balance(self) -> Balance:
        """The account's balance (``GET /api/v1/user/balance``, scope ``balance:read``)."""
        return Balance.from_json(await self._request("GET", "/api/v1/user/balance"))

    async def models(self) -> List[Model]:
        """The model catalog (``GET /api/v1/models``; no key needed)."""
        return [Model.from_json(m) for m in await self._request("GET", "/api/v1/models")]

    async def _request(
        self,
        method: str,
        path: str,
        *,
        params: Optional[Mapping[str, Any]] = None,
        json: Any = None,
        headers: Optional[Dict[str, str]] = None,
        safe: Optional[bool] = None,
        host: Optional[str] = None,
        upload: Optional[base.FileInput] = None,
        upload_name: Optional[str] = None,
        upload_type: Optional[str] = None,
        meta: Optional[Dict[str, Any]] = None,
    ) -> Any:
        """Sends one API request with the retry policy of ``_base.retry_delay``; returns the answer's data."""
        s = self._settings
        url = (host or s.base_url) + path
        all_headers = {**base.headers(s), **(headers or {})}
        repeatable = method == "GET" if safe is None else safe
        close, rewind = (lambda: None), (lambda: True)
        files = None
        if upload is not None:
            part, close, rewind = base.upload_part(upload, upload_name, upload_type)
            files = {"file": part}
        try:
            attempt = 0
            while True:
                response: Optional[httpx.Response] = None
                failure: Optional[Exception] = None
                try:
                    response = await self._http.request(method, url, params=params, json=json, headers=all_headers, files=files)
                except httpx.TransportError as e:
                    failure = e
                delay = base.retry_delay(response, attempt, repeatable) if attempt < s.max_retries else None
                if delay is not None and not rewind():
                    delay = None
                if delay is None or (response is not None and response.status_code < 400):
                    if response is None:
                        raise errors.ConnectionError(f"could not reach GenGate at {url}: {failure}") from failure
                    if meta is not None:
                        meta["headers"] = response.headers
                    return base.decode(response)
                await asyncio.sleep(delay)
                attempt += 1
        finally:
            close()


class Tasks:
    """``gg.tasks``: create, get, list, cancel and wait for tasks."""

    def __init__(self, client: AsyncGenGate) -> None:
        self._c = client

    async def create(
        self, model: str, input: Mapping[str, Any], *, callback_url: Optional[str] = None, idempotency_key: Optional[str] = None
    ) -> CreatedTask:
        """``POST /api/v1/jobs/createTask``. Without ``idempotency_key`` one is made for this call, so the
        client's own retries (after a lost answer or a 5xx) return the same task and charge once."""
        key = idempotency_key or base.new_idempotency_key()
        meta: Dict[str, Any] = {}
        data = await self._c._request(
            "POST", "/api/v1/jobs/createTask", json=base.create_body(model, input, callback_url),
            headers={"idempotency-key": key}, safe=True, meta=meta,
        )
        return CreatedTask.from_json(data, meta["headers"].get("idempotent-replayed") == "true", key)

    async def get(self, task_id: str) -> Task:
        """``GET /api/v1/jobs/recordInfo``: the task as it is now."""
        return Task.from_json(await self._c._request("GET", "/api/v1/jobs/recordInfo", params={"taskId": task_id}))

    async def list_page(self, *, state: Optional[str] = None, limit: Optional[int] = None, before: Optional[int] = None) -> TaskPage:
        """One page of ``GET /api/v1/jobs/list`` (newest first); pass its ``next_before`` as ``before`` for the next."""
        return TaskPage.from_json(await self._c._request("GET", "/api/v1/jobs/list", params=base.list_params(state, limit, before)))

    async def list(self, *, state: Optional[str] = None, limit: Optional[int] = None, before: Optional[int] = None) -> AsyncIterator[Task]:
        """Every task of the account (or of one ``state``), newest first, fetching pages of ``limit`` as it goes:
        ``async for task in gg.tasks.list(): ...``."""
        while True:
            page = await self.list_page(state=state, limit=limit, before=before)
            for task in page.items:
                yield task
            if page.next_before is None:
                return
            before = page.next_before

    async def cancel(self, task_id: str) -> CancelResult:
        """``POST /api/v1/jobs/cancel``: fails the task with failCode 499 and refunds it, or raises
        :class:`TaskNotCancellableError` (final task, or its backend could not cancel)."""
        return CancelResult.from_json(await self._c._request("POST", "/api/v1/jobs/cancel", json={"taskId": task_id}))

    async def wait(self, task_id: str, *, on_progress: Optional[base.ProgressCallback] = None, timeout: Optional[float] = 1320.0) -> Task:
        """Polls the task until it is final and returns it (failed ones too; ``run`` raises for those).
        ``on_progress(task)`` (a function or a coroutine function) is called whenever the state or progress changes."""
        end = None if timeout is None else time.monotonic() + timeout
        poll = base.Poll()
        last: Optional[Task] = None
        while True:
            try:
                task = await self.get(task_id)
            except errors.RateLimitError as e:  # the retries are used up: keep waiting, at the server's pace
                if end is not None and time.monotonic() + (e.retry_after or 1.0) > end:
                    raise
                await asyncio.sleep(e.retry_after or 1.0)
                continue
            if on_progress is not None and base.progress_changed(last, task):
                outcome = on_progress(task)
                if inspect.isawaitable(outcome):
                    await outcome
            last = task
            if task.done:
                return task
            remaining = float("inf") if end is None else end - time.monotonic()
            if remaining <= 0:
                raise errors.WaitTimeoutError(f"task {task_id} is still {task.state} after {timeout} s", task)
            await asyncio.sleep(poll.delay(remaining))


class Files:
    """``gg.files``: uploads for ``image_urls``, ``video_urls``, ``audio_urls`` and frame links."""

    def __init__(self, client: AsyncGenGate) -> None:
        self._c = client

    async def upload(self, file: base.FileInput, *, filename: Optional[str] = None, content_type: Optional[str] = None) -> UploadedFile:
        """``POST /api/v1/files/upload`` of a path, bytes or binary file object (kept 24 hours).
        The server decides the kind by the bytes; ``filename`` names bytes and unnamed streams."""
        return UploadedFile.from_json(
            await self._c._request("POST", "/api/v1/files/upload", upload=file, upload_name=filename, upload_type=content_type, safe=False)
        )


class Prices:
    """``gg.prices``: the public price list and calculator (no key needed)."""

    def __init__(self, client: AsyncGenGate) -> None:
        self._c = client

    async def calculate(self, model: str, **params: Any) -> Price:
        """The exact price createTask would charge: ``gg.prices.calculate("seedance-2.5", resolution="720p", duration=5)``."""
        return Price.from_json(await self._c._request("GET", "/v1/pricing/calculate", params=base.price_params(model, params), host=self._c._settings.pricing_base_url))

    async def list(self) -> Dict[str, Any]:
        """``GET /v1/pricing``: every model's price tiers and rules, as JSON."""
        result: Dict[str, Any] = await self._c._request("GET", "/v1/pricing", host=self._c._settings.pricing_base_url)
        return result
