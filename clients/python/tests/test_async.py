"""AsyncGenGate: the same surface with await; tasks.list is an async iterator; on_progress may be a coroutine."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Dict, List

import pytest

from gengate import AsyncGenGate, Task, TaskFailedError, TaskNotCancellableError, UnsupportedModelError


def test_async_surface(env: Dict[str, str], media: Path) -> None:
    async def main() -> None:
        seen: List[str] = []

        async def progress(task: Task) -> None:
            await asyncio.sleep(0)
            seen.append(task.state)

        async with AsyncGenGate(api_key=env["GENGATE_API_KEY"], base_url=env["GENGATE_BASE_URL"]) as gg:
            image, music = await asyncio.gather(
                gg.run("nano-banana-2", {"prompt": "an async fox"}, on_progress=progress),
                gg.run("suno-v6", {"prompt": "an async tune"}),
            )
            assert image.urls and len(music.urls) == 2 and seen[-1] == "success"
            assert image.cost_usd == (await gg.prices.calculate("nano-banana-2")).price_usd
            photo = await gg.files.upload(media / "photo.jpg")
            video = await gg.run("wan-2.7", {"prompt": "it moves", "resolution": "480p", "first_frame_url": photo.url})
            assert video.duration == 5
            with open(media / "song.mp3", "rb") as f:
                assert (await gg.files.upload(f)).kind == "audio"
            assert (await gg.tasks.get(image.task_id)).succeeded
            assert (await gg.balance()).currency == "USD"
            with pytest.raises(UnsupportedModelError):
                await gg.tasks.create("no-such-model", {"prompt": "x"})
            with pytest.raises(TaskFailedError) as e:
                await gg.run("nano-banana-2", {"prompt": "gengate:fail=504"})
            assert e.value.status == 504 and e.value.task.refunded
            with pytest.raises(TaskNotCancellableError):
                await gg.tasks.cancel(image.task_id)

        async with AsyncGenGate(api_key=env["GENGATE_IDLE_API_KEY"], base_url=env["GENGATE_IDLE_BASE_URL"]) as idle:
            made = [(await idle.tasks.create("seedream-flash", {"prompt": f"async page {i}"})).task_id for i in range(3)]
            listed = [t.task_id async for t in idle.tasks.list(state="waiting", limit=2)]
            assert listed[:3] == made[::-1]
            for task_id in made:
                assert (await idle.tasks.cancel(task_id)).refunded

    asyncio.run(main())
