"""429: the clients wait the Retry-After and try again; with no retries left the RateLimitError says how long."""

from __future__ import annotations

import asyncio
import time
from typing import Dict, List, Tuple

import httpx
import pytest

from gengate import AsyncGenGate, GenGate, RateLimitError


def recorder() -> Tuple[List[Tuple[float, int]], Dict[str, list]]:
    log: List[Tuple[float, int]] = []
    return log, {"response": [lambda r: log.append((time.monotonic(), r.status_code))]}


def check_waited(log: List[Tuple[float, int]]) -> None:
    statuses = [s for _, s in log]
    assert 429 in statuses, statuses
    for (at, status), (next_at, _) in zip(log, log[1:]):
        if status == 429:
            assert next_at - at >= 0.9  # Retry-After is at least 1 s


def test_sync_retries_after_retry_after(env: Dict[str, str]) -> None:
    log, hooks = recorder()
    http = httpx.Client(event_hooks=hooks)
    with GenGate(api_key=env["GENGATE_LIMITED_API_KEY"], base_url=env["GENGATE_LIMITED_BASE_URL"], http_client=http) as gg:
        balances = [gg.balance().balance for _ in range(7)]
    http.close()
    assert len(balances) == 7
    check_waited(log)


def test_no_retries_left_raises_with_retry_after(env: Dict[str, str]) -> None:
    with GenGate(api_key=env["GENGATE_LIMITED_API_KEY"], base_url=env["GENGATE_LIMITED_BASE_URL"], max_retries=0) as gg:
        with pytest.raises(RateLimitError) as e:
            for _ in range(10):
                gg.balance()
    assert e.value.status == 429 and e.value.error == "rate_limit_error"
    assert e.value.retry_after is not None and e.value.retry_after >= 1 and "rate limit" in e.value.msg


def test_run_under_a_tight_limit(env: Dict[str, str]) -> None:
    log, hooks = recorder()
    http = httpx.Client(event_hooks=hooks)
    with GenGate(api_key=env["GENGATE_LIMITED_API_KEY"], base_url=env["GENGATE_LIMITED_BASE_URL"], http_client=http) as gg:
        results = [gg.run("nano-banana-2", {"prompt": f"kite {i}"}) for i in range(3)]
        for _ in range(4):
            gg.balance()
    http.close()
    assert all(r.urls for r in results)
    check_waited(log)


def test_async_retries_after_retry_after(env: Dict[str, str]) -> None:
    async def main() -> None:
        log, hooks = recorder()

        async def hook(r: httpx.Response) -> None:
            hooks["response"][0](r)

        async with httpx.AsyncClient(event_hooks={"response": [hook]}) as http:
            async with AsyncGenGate(api_key=env["GENGATE_LIMITED_API_KEY"], base_url=env["GENGATE_LIMITED_BASE_URL"], http_client=http) as gg:
                balances = await asyncio.gather(*(gg.balance() for _ in range(7)))
        assert len(balances) == 7
        assert 429 in [s for _, s in log]

    asyncio.run(main())
