"""GenGate's Python client: ``GenGate`` (sync) and ``AsyncGenGate`` (asyncio), typed models, one exception
class per ``error`` id, and ``verify_webhook`` for callback deliveries. Needs only httpx.

    from gengate import GenGate

    gg = GenGate(api_key="gg_...", base_url="http://127.0.0.1:8080")
    result = gg.run("nano-banana-2", {"prompt": "a red fox in the snow"})
    print(result.urls, result.cost_usd)
"""

from ._base import __version__
from .async_client import AsyncGenGate
from .client import GenGate
from .errors import (
    APIError,
    AuthenticationError,
    ConnectionError,
    ContentRejectedError,
    GenGateError,
    HeadersTooLargeError,
    InvalidParameterError,
    InvalidRequestError,
    ModelDisabledError,
    NotFoundError,
    PaymentRequiredError,
    PermissionDeniedError,
    RateLimitError,
    RequestTimeoutError,
    ServerError,
    TaskFailedError,
    TaskNotCancellableError,
    TaskNotFoundError,
    UnsupportedModelError,
    ValidationError,
    WaitTimeoutError,
    WebhookVerificationError,
)
from .models import Balance, CallbackStatus, CancelResult, CreatedTask, FileLink, Model, Price, RunResult, Task, TaskError, TaskPage, UploadedFile
from .webhooks import sign_standard, verify_webhook

__all__ = [
    "__version__",
    "GenGate",
    "AsyncGenGate",
    "verify_webhook",
    "sign_standard",
    "Balance",
    "CallbackStatus",
    "CancelResult",
    "CreatedTask",
    "FileLink",
    "Model",
    "Price",
    "RunResult",
    "Task",
    "TaskError",
    "TaskPage",
    "UploadedFile",
    "GenGateError",
    "APIError",
    "AuthenticationError",
    "ConnectionError",
    "ContentRejectedError",
    "HeadersTooLargeError",
    "InvalidParameterError",
    "InvalidRequestError",
    "ModelDisabledError",
    "NotFoundError",
    "PaymentRequiredError",
    "PermissionDeniedError",
    "RateLimitError",
    "RequestTimeoutError",
    "ServerError",
    "TaskFailedError",
    "TaskNotCancellableError",
    "TaskNotFoundError",
    "UnsupportedModelError",
    "ValidationError",
    "WaitTimeoutError",
    "WebhookVerificationError",
]
