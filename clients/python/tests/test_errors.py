"""Refusals and failures arrive as exception classes by `error` id, with status, msg and request id."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Dict

import pytest

from gengate import (
    APIError,
    AuthenticationError,
    GenGate,
    InvalidParameterError,
    InvalidRequestError,
    PaymentRequiredError,
    TaskFailedError,
    TaskNotFoundError,
    UnsupportedModelError,
    ValidationError,
)


def test_unknown_model(gg: GenGate) -> None:
    with pytest.raises(UnsupportedModelError) as e:
        gg.tasks.create("no-such-model", {"prompt": "x"})
    assert e.value.status == 400 and e.value.error == "unsupported_model"
    assert "no-such-model" in e.value.msg and e.value.request_id


def test_bad_input_names_the_field(gg: GenGate) -> None:
    with pytest.raises(InvalidRequestError) as e:
        gg.tasks.create("wan-2.7", {"prompt": "x", "duration": 7})
    assert e.value.status == 400 and "duration" in e.value.msg
    with pytest.raises(InvalidRequestError) as p:
        gg.tasks.create("wan-2.7", {})
    assert "input.prompt" in p.value.msg
    with pytest.raises(ValidationError) as v:
        gg.tasks.get("")
    assert v.value.status == 422 and "taskId" in v.value.msg


def test_payment_required_carries_the_price(env: Dict[str, str]) -> None:
    with GenGate(api_key=env["GENGATE_POOR_API_KEY"], base_url=env["GENGATE_BASE_URL"]) as poor:
        with pytest.raises(PaymentRequiredError) as e:
            poor.run("suno-v6", {"prompt": "a tune"})
        assert poor.balance().balance == Decimal("0")
    assert e.value.status == 402 and e.value.error == "payment_required"
    assert e.value.balance == "0.0000" and e.value.required == "0.0900" and e.value.top_up_url


def test_bad_key(env: Dict[str, str]) -> None:
    with GenGate(api_key="gg_not_a_real_key", base_url=env["GENGATE_BASE_URL"]) as bad:
        with pytest.raises(AuthenticationError) as e:
            bad.balance()
    assert e.value.status == 401 and isinstance(e.value, APIError)


def test_unknown_task(gg: GenGate) -> None:
    with pytest.raises(TaskNotFoundError) as e:
        gg.tasks.get("tk_AAAAAAAAAAAAAAAAAAAAAA")
    assert e.value.status == 404 and e.value.error == "task_not_found"


def test_failed_task_raises_and_is_refunded(gg: GenGate) -> None:
    before = gg.balance().balance
    with pytest.raises(TaskFailedError) as e:
        gg.run("nano-banana-2", {"prompt": "a cat gengate:fail=501"})
    assert e.value.status == 501 and "simulated" in e.value.msg
    assert e.value.error and e.value.error == e.value.task.error.type
    assert e.value.task.state == "fail" and e.value.task.refunded and e.value.task.fail_code == 501
    assert gg.balance().balance == before


def test_upload_refused(gg: GenGate, media: Path) -> None:
    with pytest.raises(ValidationError) as e:
        gg.files.upload(b"this is not a photo", filename="notes.txt")
    assert e.value.status == 422 and e.value.msg


def test_price_calculator_refusal_names_the_parameter(gg: GenGate) -> None:
    with pytest.raises(InvalidParameterError) as e:
        gg.prices.calculate("seedance-2.0-fast", duration=20)
    assert e.value.status == 400 and e.value.error == "invalid_parameter" and e.value.field == "duration"
    with pytest.raises(UnsupportedModelError):
        gg.prices.calculate("no-such-model")


def test_unreachable_server_is_a_connection_error() -> None:
    import builtins

    from gengate import ConnectionError as GenGateConnectionError

    with GenGate(api_key="gg_x", base_url="http://127.0.0.1:9", max_retries=1) as nowhere:
        with pytest.raises(GenGateConnectionError) as e:
            nowhere.balance()
    assert isinstance(e.value, builtins.ConnectionError) and "127.0.0.1:9" in str(e.value)


def test_refusals_of_the_request_share_a_base_class(gg: GenGate) -> None:
    with pytest.raises(InvalidRequestError):
        gg.tasks.create("no-such-model", {"prompt": "x"})
    with pytest.raises(InvalidRequestError):
        gg.tasks.get("")
