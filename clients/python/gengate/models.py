"""Typed views of GenGate's answers (dataclasses). Each keeps the decoded JSON it came from in ``raw``."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Dict, List, Optional
from urllib.parse import unquote, urlsplit

#: Task states, in lifecycle order; ``success`` and ``fail`` are final.
STATES = ("waiting", "queuing", "generating", "success", "fail")
FINAL_STATES = ("success", "fail")


def _decimal(value: Any) -> Optional[Decimal]:
    if value is None or value == "":
        return None
    return Decimal(str(value))


def _int(value: Any) -> Optional[int]:
    if value is None or value == "":
        return None
    return int(value)


@dataclass(frozen=True)
class TaskError:
    """Why a task failed: ``code`` (the failCode), ``message``, ``type`` (``cancelled``, ``generation``, ...)."""

    code: Optional[int]
    message: str
    type: str

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "TaskError":
        return cls(code=_int(d.get("code")), message=str(d.get("message", "")), type=str(d.get("type", "")))


@dataclass(frozen=True)
class CallbackStatus:
    """Where the delivery of the task's ``callBackUrl`` stands."""

    url: str
    status: str  # pending | delivered | failed
    attempts: int
    last_attempt_at: Optional[str]
    last_status_code: Optional[int]
    last_error: Optional[str]
    delivered_at: Optional[str]

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "CallbackStatus":
        return cls(
            url=d.get("url", ""),
            status=d.get("status", ""),
            attempts=int(d.get("attempts") or 0),
            last_attempt_at=d.get("lastAttemptAt"),
            last_status_code=d.get("lastStatusCode"),
            last_error=d.get("lastError"),
            delivered_at=d.get("deliveredAt"),
        )


@dataclass(frozen=True)
class Task:
    """A task as ``/jobs/recordInfo`` shows it. ``result`` is ``resultJson`` decoded (it is a JSON string
    for images, music and the kie dialect, an object for video); ``result_urls`` its file links."""

    task_id: str
    model: str
    state: str
    status: str
    progress: int
    param: Optional[str]
    result: Optional[Dict[str, Any]]
    result_urls: List[str]
    fail_code: Optional[int]
    fail_msg: str
    error: Optional[TaskError]
    cost_usd: Optional[Decimal]
    cost_rub: Optional[float]
    credits_consumed: Optional[float]
    refunded: bool
    files_expired: bool
    create_time: Optional[int]
    update_time: Optional[int]
    complete_time: Optional[int]
    cost_time: Optional[int]
    last_frame_url: Optional[str]
    callback: Optional[CallbackStatus]
    raw: Dict[str, Any] = field(repr=False, compare=False)

    @property
    def done(self) -> bool:
        """True once the task is final (``success`` or ``fail``)."""
        return self.state in FINAL_STATES

    @property
    def succeeded(self) -> bool:
        return self.state == "success"

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Task":
        result = d.get("resultJson")
        if isinstance(result, str):
            result = json.loads(result) if result else None
        urls = list(result.get("resultUrls") or []) if isinstance(result, dict) else []
        error = d.get("error")
        callback = d.get("callback")
        return cls(
            task_id=d.get("taskId") or d.get("task_id") or "",
            model=d.get("model", ""),
            state=d.get("state", ""),
            status=d.get("status", ""),
            progress=int(d.get("progress") or 0),
            param=d.get("param"),
            result=result if isinstance(result, dict) else None,
            result_urls=urls,
            fail_code=_int(d.get("failCode")),
            fail_msg=d.get("failMsg") or "",
            error=TaskError.from_json(error) if isinstance(error, dict) else None,
            cost_usd=_decimal(d.get("costUsd")),
            cost_rub=d.get("costRub"),
            credits_consumed=d.get("creditsConsumed"),
            refunded=bool(d.get("refunded")),
            files_expired=bool(d.get("filesExpired")),
            create_time=d.get("createTime"),
            update_time=d.get("updateTime"),
            complete_time=d.get("completeTime"),
            cost_time=d.get("costTime"),
            last_frame_url=d.get("lastFrameUrl"),
            callback=CallbackStatus.from_json(callback) if isinstance(callback, dict) else None,
            raw=d,
        )


@dataclass(frozen=True)
class CreatedTask:
    """The answer of createTask. ``replayed`` is true when the Idempotency-Key had already made this task."""

    task_id: str
    status: str
    replayed: bool
    idempotency_key: Optional[str]
    raw: Dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, d: Dict[str, Any], replayed: bool, idempotency_key: Optional[str]) -> "CreatedTask":
        return cls(task_id=d.get("taskId") or d.get("task_id") or "", status=d.get("status", ""), replayed=replayed,
                   idempotency_key=idempotency_key, raw=d)


_KINDS = {"png": "image", "jpg": "image", "jpeg": "image", "webp": "image", "gif": "image",
          "mp4": "video", "mov": "video", "webm": "video", "mp3": "audio", "wav": "audio", "m4a": "audio"}


@dataclass(frozen=True)
class FileLink:
    """A result file: its link, its kind (``image``, ``video`` or ``audio``, by the name's extension) and name.
    Links are kept 24 hours."""

    url: str
    kind: str
    name: str

    @classmethod
    def of(cls, url: str, fallback: str = "image") -> "FileLink":
        name = unquote(urlsplit(url).path.rsplit("/", 1)[-1]) or "file"
        ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
        return cls(url=url, kind=_KINDS.get(ext, fallback), name=name)


@dataclass(frozen=True)
class RunResult:
    """What ``run`` returns for a successful task: the file links, the price and the whole Task.

    ``urls`` are the result files (an image or video each, or the two MP3 tracks of a music task) and
    ``files`` the same as :class:`FileLink` with their kind; ``cost_usd`` is what the task cost (after
    any automatic-length settlement), exact, and ``cost_micros`` the same in micro-USD."""

    task_id: str
    model: str
    urls: List[str]
    files: List[FileLink]
    cost_usd: Decimal
    cost_micros: int
    cost_rub: Optional[float]
    duration: Optional[float]
    last_frame_url: Optional[str]
    task: Task = field(repr=False)

    @classmethod
    def from_task(cls, task: Task) -> "RunResult":
        duration = task.result.get("duration") if task.result else None
        cost = task.cost_usd if task.cost_usd is not None else Decimal(0)
        return cls(
            task_id=task.task_id,
            model=task.model,
            urls=list(task.result_urls),
            files=[FileLink.of(u) for u in task.result_urls],
            cost_usd=cost,
            cost_micros=int(cost * 1_000_000),
            cost_rub=task.cost_rub,
            duration=float(duration) if isinstance(duration, (int, float)) else None,
            last_frame_url=task.last_frame_url,
            task=task,
        )


@dataclass(frozen=True)
class TaskPage:
    """One page of ``/jobs/list``: tasks newest first; ``next_before`` is None on the last page."""

    items: List[Task]
    next_before: Optional[int]

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "TaskPage":
        return cls(items=[Task.from_json(t) for t in d.get("items") or []], next_before=d.get("nextBefore"))


@dataclass(frozen=True)
class CancelResult:
    """The answer of ``/jobs/cancel``: the task is now ``fail`` with failCode 499 and refunded."""

    task_id: str
    state: str
    status: str
    fail_code: Optional[int]
    refunded: bool
    raw: Dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "CancelResult":
        return cls(task_id=d.get("taskId", ""), state=d.get("state", ""), status=d.get("status", ""),
                   fail_code=_int(d.get("failCode")), refunded=bool(d.get("refunded")), raw=d)


@dataclass(frozen=True)
class UploadedFile:
    """An upload: ``url`` goes into ``image_urls``, ``video_urls``, ``audio_urls``, ``first_frame_url`` ...;
    ``kind`` is ``image``, ``video`` or ``audio``; ``seconds`` the whole seconds billing counts."""

    url: str
    file_name: str
    kind: str
    duration: float
    seconds: int
    expires_in_days: float
    raw: Dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "UploadedFile":
        return cls(url=d.get("url", ""), file_name=d.get("fileName", ""), kind=d.get("kind", ""),
                   duration=float(d.get("duration") or 0), seconds=int(d.get("seconds") or 0),
                   expires_in_days=float(d.get("expiresInDays") or 0), raw=d)


@dataclass(frozen=True)
class Balance:
    """The account's committed balance: ``balance`` in USD (4 decimals, exact), ``balance_rub`` at the server's rate."""

    balance: Decimal
    currency: str
    balance_rub: Optional[float]
    raw: Dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Balance":
        return cls(balance=Decimal(str(d.get("balance", "0"))), currency=d.get("currency", "USD"),
                   balance_rub=d.get("balanceRub"), raw=d)


@dataclass(frozen=True)
class Price:
    """The exact price of a model and parameters (``/v1/pricing/calculate``): what createTask charges."""

    model: str
    unit: str
    params: Dict[str, Any]
    billable_seconds: float
    price_usd: Decimal
    price_rub: Optional[float]
    price_display: str
    raw: Dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Price":
        return cls(model=d.get("model", ""), unit=d.get("unit", ""), params=dict(d.get("params") or {}),
                   billable_seconds=float(d.get("billable_seconds") or 0), price_usd=Decimal(str(d.get("price_usd", "0"))),
                   price_rub=d.get("price_rub"), price_display=d.get("price_display", ""), raw=d)


@dataclass(frozen=True)
class Model:
    """A model of ``/api/v1/models``: id, aliases, kind (``image``, ``video``, ``music``), whether enabled."""

    id: str
    aliases: List[str]
    kind: str
    title: str
    enabled: bool
    raw: Dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, d: Dict[str, Any]) -> "Model":
        return cls(id=d.get("id", ""), aliases=list(d.get("aliases") or []), kind=d.get("kind", ""),
                   title=d.get("title", ""), enabled=bool(d.get("enabled", True)), raw=d)
