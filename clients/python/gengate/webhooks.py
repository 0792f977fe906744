"""Verification of GenGate's callback deliveries (docs/callbacks.md), with the standard library only."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from typing import Any, Iterable, Mapping, Optional, Tuple, Union

from .errors import WebhookVerificationError

Headers = Union[Mapping[str, str], Iterable[Tuple[str, str]]]

#: How far a delivery's timestamp may be from now, either way (seconds), as Standard Webhooks advises.
DEFAULT_TOLERANCE = 300


def verify_webhook(
    headers: Headers,
    body: Union[bytes, str],
    secret: str,
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    scheme: str = "auto",
    now: Optional[float] = None,
) -> Any:
    """Checks a callback delivery and returns its parsed JSON body; raises :class:`WebhookVerificationError`.

    Pass the **raw** body, as received, and the request headers (any mapping, case-insensitive).
    ``secret`` is the account's webhook secret as shown (``whsec_...``).

    ``scheme``:
      * ``"standard"`` — Standard Webhooks: ``webhook-signature`` holds space-separated ``v1,<base64>``
        signatures; one must equal base64(HMAC-SHA256(key, ``id.timestamp.body``)), the key being the
        base64 secret after ``whsec_`` decoded (base64url secrets of older accounts are accepted).
      * ``"legacy"`` — ``X-Webhook-Signature`` = base64(HMAC-SHA256(secret string, ``taskId.timestamp``)).
        It does not cover the body; prefer the standard scheme.
      * ``"auto"`` (default) — the standard scheme when the delivery carries ``webhook-signature``
        (it then decides alone: a failed check is not retried with the weaker scheme), else the legacy one.

    Both refuse a timestamp more than ``tolerance`` seconds away from ``now`` (default: the clock).
    """
    h = _lower(headers)
    raw = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    current = time.time() if now is None else now
    if scheme == "auto":
        scheme = "standard" if "webhook-signature" in h else "legacy"
    if scheme == "standard":
        _verify_standard(h, raw, secret, tolerance, current)
        return _parse(raw)
    if scheme == "legacy":
        parsed = _parse(raw)
        _verify_legacy(h, parsed, secret, tolerance, current)
        return parsed
    raise ValueError(f"scheme must be 'auto', 'standard' or 'legacy' (got {scheme!r})")


def standard_key(secret: str) -> bytes:
    """The HMAC key of a Standard Webhooks secret: the base64 after ``whsec_``, decoded."""
    bare = secret[len("whsec_"):] if secret.startswith("whsec_") else secret
    b64 = bare.replace("-", "+").replace("_", "/")
    b64 += "=" * (-len(b64) % 4)
    try:
        return base64.b64decode(b64, validate=True)
    except (binascii.Error, ValueError) as e:
        raise WebhookVerificationError("the webhook secret is not a whsec_ base64 secret") from e


def sign_standard(secret: str, webhook_id: str, timestamp: int, body: Union[bytes, str]) -> str:
    """The ``webhook-signature`` value GenGate sends for these parts (``v1,<base64>``); useful in tests."""
    raw = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    mac = hmac.new(standard_key(secret), f"{webhook_id}.{timestamp}.".encode("utf-8") + raw, hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode("ascii")


def _verify_standard(h: Mapping[str, str], raw: bytes, secret: str, tolerance: float, now: float) -> None:
    webhook_id, stamp, signatures = h.get("webhook-id"), h.get("webhook-timestamp"), h.get("webhook-signature")
    if not webhook_id or not stamp or not signatures:
        raise WebhookVerificationError("missing webhook-id, webhook-timestamp or webhook-signature header")
    timestamp = _timestamp(stamp, tolerance, now)
    expected = sign_standard(secret, webhook_id, timestamp, raw).split(",", 1)[1].encode("ascii")
    for candidate in signatures.split():
        version, _, value = candidate.partition(",")
        if version == "v1" and hmac.compare_digest(value.encode("ascii", "replace"), expected):
            return
    raise WebhookVerificationError("no webhook-signature matches the body and the secret")


def _verify_legacy(h: Mapping[str, str], parsed: Any, secret: str, tolerance: float, now: float) -> None:
    stamp, signature = h.get("x-webhook-timestamp"), h.get("x-webhook-signature")
    if not stamp or not signature:
        raise WebhookVerificationError("missing X-Webhook-Timestamp or X-Webhook-Signature header")
    task_id = parsed.get("taskId") if isinstance(parsed, dict) else None
    if not isinstance(task_id, str):  # kie.ai Suno-shaped callbacks carry the id in data.task_id
        data = parsed.get("data") if isinstance(parsed, dict) else None
        task_id = data.get("task_id") if isinstance(data, dict) else None
    if not isinstance(task_id, str):
        raise WebhookVerificationError("the body names no taskId")
    mac = hmac.new(secret.encode("utf-8"), f"{task_id}.{stamp}".encode("utf-8"), hashlib.sha256).digest()
    try:
        given = base64.b64decode(signature, validate=True)
    except (binascii.Error, ValueError):
        given = b""
    if not hmac.compare_digest(given, mac):
        raise WebhookVerificationError("X-Webhook-Signature does not match the task id, timestamp and secret")
    _timestamp(stamp, tolerance, now)


def _timestamp(stamp: str, tolerance: float, now: float) -> int:
    try:
        timestamp = int(stamp)
    except ValueError as e:
        raise WebhookVerificationError(f"the timestamp is not whole seconds (got {stamp[:20]!r})") from e
    if abs(now - timestamp) > tolerance:
        raise WebhookVerificationError(f"the timestamp {timestamp} is more than {tolerance:g} s from now: a stale or replayed delivery")
    return timestamp


def _parse(raw: bytes) -> Any:
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise WebhookVerificationError("the body is not JSON") from e


def _lower(headers: Headers) -> Mapping[str, str]:
    items = headers.items() if hasattr(headers, "items") else headers  # type: ignore[union-attr]
    return {str(k).lower(): str(v) for k, v in items}
