"""Exceptions: one class per GenGate ``error`` id, all carrying the status, ``msg`` and request id."""

from __future__ import annotations

import builtins
from typing import Any, Dict, Mapping, Optional, Type


class GenGateError(Exception):
    """Base of every exception this package raises."""


class APIError(GenGateError):
    """GenGate answered with an error.

    ``status`` is the HTTP status, ``error`` the envelope's error id (``payment_required``, ...),
    ``msg`` the server's message (it names the field and the allowed values), ``request_id`` the
    ``x-request-id`` to quote when reporting a problem, ``data`` the envelope's ``data`` (the 402
    answer carries the balance and the price there) and ``body`` the decoded answer.
    """

    status: int
    error: Optional[str]
    msg: str
    request_id: Optional[str]
    data: Any
    body: Any

    def __init__(
        self, status: int, error: Optional[str], msg: str, request_id: Optional[str] = None, data: Any = None, body: Any = None
    ) -> None:
        super().__init__(f"{status} {error or 'error'}: {msg}" + (f" (request id {request_id})" if request_id else ""))
        self.status = status
        self.error = error
        self.msg = msg
        self.request_id = request_id
        self.data = data
        self.body = body


class InvalidRequestError(APIError):
    """400 ``invalid_request_error``: a bad body, input value, callBackUrl or Idempotency-Key.
    The other refusals of the request itself (422, unknown model, content check) derive from it."""


class ValidationError(InvalidRequestError):
    """422 ``validation_error``: a required field is missing, or an upload was refused."""


class UnsupportedModelError(InvalidRequestError):
    """``unsupported_model``: the model is not a known id or alias."""


class ContentRejectedError(InvalidRequestError):
    """400 ``nsfw_content_detected``: the content check refused the prompt or a photo; nothing was charged."""


class AuthenticationError(APIError):
    """401 ``authentication_error`` (``unauthorized``): missing, unknown or revoked API key."""


class PaymentRequiredError(APIError):
    """402 ``payment_required`` (``insufficient_balance``): the balance is below the price."""

    @property
    def balance(self) -> Optional[str]:
        return self.data.get("balance") if isinstance(self.data, dict) else None

    @property
    def required(self) -> Optional[str]:
        return self.data.get("required") if isinstance(self.data, dict) else None

    @property
    def top_up_url(self) -> Optional[str]:
        return self.data.get("topUpUrl") if isinstance(self.data, dict) else None


class PermissionDeniedError(APIError):
    """403 ``permission_error``: disabled account, or the key lacks the scope or the model."""


class NotFoundError(APIError):
    """404 ``not_found``: an unknown route or file."""


class TaskNotFoundError(NotFoundError):
    """404 ``task_not_found``: no such task in this account."""


class TaskNotCancellableError(APIError):
    """409 ``task_not_cancellable``: the task is final, or its backend could not cancel it."""


class RequestTimeoutError(APIError):
    """408 ``request_timeout``: the request was sent too slowly."""


class HeadersTooLargeError(APIError):
    """431 ``headers_too_large``."""


class RateLimitError(APIError):
    """429 ``rate_limit_error`` (``rate_limited``), raised once the client's retries are used up.

    ``retry_after`` is the server's ``Retry-After`` in seconds.
    """

    retry_after: Optional[float] = None


class ServerError(APIError):
    """5xx ``server_error`` (or an answer that is not GenGate's envelope, e.g. from a proxy)."""


class ModelDisabledError(APIError):
    """505 ``model_disabled``: the operator disabled the model."""


class InvalidParameterError(APIError):
    """Price calculator: ``invalid_parameter`` or ``missing_parameter``; ``field`` names the query parameter."""

    @property
    def field(self) -> Optional[str]:
        return self.data.get("field") if isinstance(self.data, dict) else None


class TaskFailedError(APIError):
    """The task ended in ``fail``: ``status`` is its ``failCode`` (400, 422, 499, 500, 501, 503, 504),
    ``error`` its ``error.type`` (``cancelled``, ``generation``, ...), ``msg`` its ``failMsg``, ``task`` the Task.
    The price was refunded (``task.refunded``)."""

    task: Any = None

    @property
    def task_id(self) -> Optional[str]:
        return getattr(self.task, "task_id", None)

    @property
    def fail_code(self) -> int:
        return self.status


class ConnectionError(GenGateError, builtins.ConnectionError):  # noqa: A001 - the natural name inside this package
    """GenGate could not be reached (refused connection, DNS, network timeout) after the retries.
    Also a built-in ``ConnectionError``."""


class WaitTimeoutError(GenGateError, builtins.TimeoutError):
    """``run`` or ``tasks.wait`` gave up before the task was final (it goes on); ``task`` is its last view.
    Also a built-in ``TimeoutError``."""

    def __init__(self, message: str, task: Any = None) -> None:
        super().__init__(message)
        self.task = task


class WebhookVerificationError(GenGateError):
    """``verify_webhook`` refused a delivery: missing headers, a bad signature or a stale timestamp."""


ERRORS: Dict[str, Type[APIError]] = {
    "invalid_request_error": InvalidRequestError,
    "validation_error": ValidationError,
    "unsupported_model": UnsupportedModelError,
    "nsfw_content_detected": ContentRejectedError,
    "authentication_error": AuthenticationError,
    "unauthorized": AuthenticationError,
    "payment_required": PaymentRequiredError,
    "insufficient_balance": PaymentRequiredError,
    "permission_error": PermissionDeniedError,
    "not_found": NotFoundError,
    "task_not_found": TaskNotFoundError,
    "task_not_cancellable": TaskNotCancellableError,
    "request_timeout": RequestTimeoutError,
    "headers_too_large": HeadersTooLargeError,
    "rate_limit_error": RateLimitError,
    "rate_limited": RateLimitError,
    "server_error": ServerError,
    "model_disabled": ModelDisabledError,
    "invalid_parameter": InvalidParameterError,
    "missing_parameter": InvalidParameterError,
}

_BY_STATUS: Dict[int, Type[APIError]] = {
    400: InvalidRequestError,
    401: AuthenticationError,
    402: PaymentRequiredError,
    403: PermissionDeniedError,
    404: NotFoundError,
    408: RequestTimeoutError,
    409: TaskNotCancellableError,
    422: ValidationError,
    429: RateLimitError,
    431: HeadersTooLargeError,
    505: ModelDisabledError,
}


def error_from_response(status: int, body: Any, headers: Mapping[str, str]) -> APIError:
    """The exception for an error answer: the REST envelope ``{code, msg, data, error}``, the price
    calculator's ``{ok: false, error: {code, message, field}}``, or anything else (by status)."""
    request_id = headers.get("x-request-id")
    error: Optional[str] = None
    msg = ""
    data: Any = None
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        e = body["error"]
        error, msg, data = e.get("code"), str(e.get("message", "")), e
    elif isinstance(body, dict) and "msg" in body:
        error = body.get("error") if isinstance(body.get("error"), str) else None
        msg, data = str(body.get("msg")), body.get("data")
    else:
        msg = (body if isinstance(body, str) else repr(body))[:300] or f"HTTP {status}"
    cls = ERRORS.get(error or "") or _BY_STATUS.get(status) or (ServerError if status >= 500 else APIError)
    exc = cls(status, error, msg, request_id, data, body)
    if isinstance(exc, RateLimitError):
        exc.retry_after = retry_after_seconds(headers)
    return exc


def retry_after_seconds(headers: Mapping[str, str]) -> Optional[float]:
    """``Retry-After`` in seconds (GenGate sends whole seconds); None when absent or not a number."""
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None
