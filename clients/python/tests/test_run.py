"""run() to success for every model kind on the local backend, with progress, file links and cost."""

from __future__ import annotations

from decimal import Decimal
from typing import Dict, List

import httpx

from gengate import GenGate, RunResult, Task


def fetch_head(url: str) -> httpx.Response:
    return httpx.get(url, headers={"range": "bytes=0-15"})


def test_image_run_returns_links_cost_and_progress(gg: GenGate) -> None:
    seen: List[Task] = []
    before = gg.balance().balance
    result = gg.run("nano-banana-2", {"prompt": "a red fox in the snow"}, on_progress=seen.append)
    assert isinstance(result, RunResult)
    assert result.model == "nano-banana-2"
    assert len(result.urls) == 1 and result.urls[0].startswith(gg.base_url + "/files/")
    r = fetch_head(result.urls[0])
    assert r.status_code == 206 and r.content.startswith(b"\x89PNG")
    # the price is the calculator's and is what the balance lost
    assert result.cost_usd == gg.prices.calculate("nano-banana-2").price_usd > 0
    assert before - gg.balance().balance == result.cost_usd
    assert seen and seen[-1].state == "success" and seen[-1].progress == 100
    order = [["waiting", "queuing", "generating", "success"].index(t.state) for t in seen]
    assert order == sorted(order)  # called on changes, in lifecycle order
    assert result.task.succeeded and result.task.result_urls == result.urls
    assert [f.kind for f in result.files] == ["image"] and result.files[0].name == "image.png"
    assert result.cost_micros == int(result.cost_usd * 1_000_000)


def test_video_run_has_duration_and_mp4(gg: GenGate) -> None:
    result = gg.run("wan-2.7", {"prompt": "waves on a beach", "resolution": "480p", "duration": 5})
    assert result.duration == 5
    assert result.task.result is not None and result.task.result["videos"][0]["url"] == result.urls[0]
    assert b"ftyp" in fetch_head(result.urls[0]).content
    assert [f.kind for f in result.files] == ["video"]
    assert result.cost_usd == gg.prices.calculate("wan-2.7", resolution="480p", duration=5).price_usd == Decimal("0.2")


def test_music_run_gives_two_tracks(gg: GenGate) -> None:
    result = gg.run("suno-v6", {"prompt": "a calm tune"})
    assert len(result.urls) == 2 and all(u.endswith(".mp3") for u in result.urls)
    head = fetch_head(result.urls[0]).content
    assert head.startswith(b"ID3") or head[:2] == b"\xff\xfb"
    assert result.cost_usd == Decimal("0.09") and result.cost_micros == 90_000
    assert [f.kind for f in result.files] == ["audio", "audio"]


def test_tasks_create_get_and_idempotency(gg: GenGate) -> None:
    first = gg.tasks.create("nano-banana-2", {"prompt": "a kite"}, idempotency_key="py-sdk-kite-1")
    again = gg.tasks.create("nano-banana-2", {"prompt": "a kite"}, idempotency_key="py-sdk-kite-1")
    assert first.task_id.startswith("tk_") and not first.replayed
    assert again.task_id == first.task_id and again.replayed
    auto = gg.tasks.create("nano-banana-2", {"prompt": "a kite"})
    assert auto.idempotency_key and auto.task_id != first.task_id
    task = gg.tasks.wait(first.task_id)
    assert task.state == "success" and task.status == "completed" and gg.tasks.get(first.task_id).result_urls == task.result_urls


def test_models_and_price_list(gg: GenGate) -> None:
    models = {m.id: m for m in gg.models()}
    assert {"nano-banana-2", "wan-2.7", "suno-v6"} <= set(models)
    assert models["suno-v6"].kind == "music"
    assert any(m["id"] == "suno-v6" for m in gg.prices.list()["models"])


class LoseFirstAnswer(httpx.BaseTransport):
    """Delivers every request but drops the first createTask answer, as a broken connection would."""

    def __init__(self) -> None:
        self.inner = httpx.HTTPTransport()
        self.keys: List[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if request.url.path.endswith("/jobs/createTask"):
            self.keys.append(request.headers["idempotency-key"])
            if len(self.keys) == 1:
                response.read()
                response.close()
                raise httpx.ReadError("connection lost before the answer", request=request)
        return response

    def close(self) -> None:
        self.inner.close()


def test_a_create_retried_after_a_lost_answer_charges_once(gg: GenGate, env: Dict[str, str]) -> None:
    transport = LoseFirstAnswer()
    price = gg.prices.calculate("suno-v6").price_usd
    before = gg.balance().balance
    with httpx.Client(transport=transport) as http:
        lossy = GenGate(api_key=env["GENGATE_API_KEY"], base_url=env["GENGATE_BASE_URL"], http_client=http)
        created = lossy.tasks.create("suno-v6", {"prompt": "a tune sent twice"})
    assert len(transport.keys) == 2 and transport.keys[0] == transport.keys[1] == created.idempotency_key
    assert created.replayed  # the second send found the task the first one made
    assert before - gg.balance().balance == price
    assert gg.tasks.wait(created.task_id).succeeded
