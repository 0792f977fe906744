"""verify_webhook against a real delivery: both schemes, several signatures, and every refusal."""

from __future__ import annotations

import json
from typing import Any, Dict

import pytest

from gengate import GenGate, WebhookVerificationError, sign_standard, verify_webhook


@pytest.fixture(scope="module")
def delivery(env: Dict[str, str], receiver: Any) -> Dict[str, Any]:
    with GenGate(api_key=env["GENGATE_API_KEY"], base_url=env["GENGATE_BASE_URL"]) as gg:
        result = gg.run("nano-banana-2", {"prompt": "a signed fox"}, callback_url=f"{receiver.url}/hook/signed")
    got = receiver.wait_for("/hook/signed")
    got["task_id"] = result.task_id
    return got


def test_both_schemes_verify_a_real_delivery(env: Dict[str, str], delivery: Dict[str, Any]) -> None:
    secret, headers, body = env["GENGATE_WEBHOOK_SECRET"], delivery["headers"], delivery["body"]
    parsed = verify_webhook(headers, body, secret)
    assert parsed["taskId"] == delivery["task_id"] and parsed["code"] == 200
    assert parsed["data"]["callbackType"] == "task_completed"
    assert verify_webhook(headers, body.decode(), secret, scheme="standard")["taskId"] == delivery["task_id"]
    assert verify_webhook(headers, body, secret, scheme="legacy")["taskId"] == delivery["task_id"]
    legacy_only = {k: v for k, v in headers.items() if not k.lower().startswith("webhook-")}
    assert verify_webhook(legacy_only, body, secret)["taskId"] == delivery["task_id"]  # auto falls back when there is no webhook-signature


def test_several_signatures_one_valid(env: Dict[str, str], delivery: Dict[str, Any]) -> None:
    headers = dict(delivery["headers"])
    key = next(k for k in headers if k.lower() == "webhook-signature")
    headers[key] = "v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA= v2,whatever " + headers[key]
    assert verify_webhook(headers, delivery["body"], env["GENGATE_WEBHOOK_SECRET"])["code"] == 200
    headers[key] = "v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
    with pytest.raises(WebhookVerificationError, match="no webhook-signature matches"):
        verify_webhook(headers, delivery["body"], env["GENGATE_WEBHOOK_SECRET"])


def test_refusals(env: Dict[str, str], delivery: Dict[str, Any]) -> None:
    secret, headers, body = env["GENGATE_WEBHOOK_SECRET"], delivery["headers"], delivery["body"]
    tampered = body.replace(b'"success"', b'"fail"', 1)
    assert tampered != body
    with pytest.raises(WebhookVerificationError):
        verify_webhook(headers, tampered, secret)
    with pytest.raises(WebhookVerificationError):
        verify_webhook(headers, body, "whsec_d3Jvbmd3cm9uZ3dyb25n")
    with pytest.raises(WebhookVerificationError):
        verify_webhook(headers, body, "whsec_d3Jvbmd3cm9uZ3dyb25n", scheme="legacy")
    stamp = int(next(v for k, v in headers.items() if k.lower() == "webhook-timestamp"))
    for scheme in ("standard", "legacy"):
        with pytest.raises(WebhookVerificationError, match="stale"):
            verify_webhook(headers, body, secret, scheme=scheme, now=stamp + 301)
        assert verify_webhook(headers, body, secret, scheme=scheme, now=stamp + 299)["code"] == 200
    with pytest.raises(WebhookVerificationError, match="missing"):
        verify_webhook({}, body, secret, scheme="standard")
    with pytest.raises(WebhookVerificationError, match="missing"):
        verify_webhook({}, body, secret)


def test_sign_standard_matches_the_server(env: Dict[str, str], delivery: Dict[str, Any]) -> None:
    h = {k.lower(): v for k, v in delivery["headers"].items()}
    signature = sign_standard(env["GENGATE_WEBHOOK_SECRET"], h["webhook-id"], int(h["webhook-timestamp"]), delivery["body"])
    assert signature in h["webhook-signature"].split()
    assert h["webhook-id"] == f"msg_{delivery['task_id']}"
    assert json.loads(delivery["body"])["data"]["state"] == "success"


def test_base64url_secrets_of_older_accounts() -> None:
    body, secret = b'{"taskId":"tk_x","code":200}', "whsec_-_8AAQID"  # base64url form of bytes fb ff 00 01 02 03
    signature = sign_standard("whsec_+/8AAQID", "msg_tk_x", 1_700_000_000, body)
    headers = {"webhook-id": "msg_tk_x", "webhook-timestamp": "1700000000", "webhook-signature": signature}
    assert verify_webhook(headers, body, secret, now=1_700_000_000)["taskId"] == "tk_x"
