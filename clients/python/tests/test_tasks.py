"""cancel, a wait that times out, and the list iterator over pages (on the idle server: tasks stay waiting)."""

from __future__ import annotations

import pytest

from gengate import GenGate, TaskNotCancellableError, WaitTimeoutError


def test_cancel_refunds_and_a_second_cancel_is_refused(idle: GenGate) -> None:
    before = idle.balance().balance
    created = idle.tasks.create("seedream-flash", {"prompt": "a kite"})
    assert idle.balance().balance < before
    cancelled = idle.tasks.cancel(created.task_id)
    assert cancelled.task_id == created.task_id and cancelled.state == "fail" and cancelled.fail_code == 499 and cancelled.refunded
    task = idle.tasks.get(created.task_id)
    assert task.done and task.error is not None and task.error.type == "cancelled" and task.refunded
    assert idle.balance().balance == before
    with pytest.raises(TaskNotCancellableError) as e:
        idle.tasks.cancel(created.task_id)
    assert e.value.status == 409 and e.value.error == "task_not_cancellable"


def test_finished_task_is_not_cancellable(gg: GenGate) -> None:
    result = gg.run("nano-banana-2", {"prompt": "a finished kite"})
    with pytest.raises(TaskNotCancellableError):
        gg.tasks.cancel(result.task_id)


def test_wait_timeout_leaves_the_task_running(idle: GenGate) -> None:
    seen = []
    with pytest.raises(WaitTimeoutError) as e:
        idle.run("seedream-flash", {"prompt": "a slow kite"}, timeout=1.2, on_progress=seen.append)
    assert e.value.task is not None and e.value.task.state == "waiting" and isinstance(e.value, TimeoutError)
    assert [t.state for t in seen] == ["waiting"]  # called once: nothing changed
    idle.tasks.cancel(e.value.task.task_id)


def test_list_iterates_over_pages(idle: GenGate) -> None:
    made = [idle.tasks.create("seedream-flash", {"prompt": f"page kite {i}"}).task_id for i in range(5)]
    page = idle.tasks.list_page(state="waiting", limit=2)
    assert len(page.items) == 2 and page.next_before is not None
    waiting = [t.task_id for t in idle.tasks.list(state="waiting", limit=2)]
    assert waiting[:5] == made[::-1]  # newest first, across three pages
    everything = [t.task_id for t in idle.tasks.list(limit=3)]
    assert len(everything) == len(set(everything)) and set(made) <= set(everything)
    assert all(t.state == "fail" for t in idle.tasks.list(state="fail", limit=100))
    for task_id in made:
        idle.tasks.cancel(task_id)
