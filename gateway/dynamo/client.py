"""The one way this package opens an AWS client, and the one place botocore's errors become ours."""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlparse

from aiobotocore.config import AioConfig
from botocore.exceptions import ClientError

from gateway.config import Settings
from gateway.dynamo.requests import MAX_ITEM_BYTES
from gateway.errors import BadUserInput, Conflict, GatewayError, Throttled, Unavailable

log = logging.getLogger(__name__)

THROTTLING = {"ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded"}
_LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}


def client_options(settings: Settings, **config: Any) -> dict[str, Any]:
    """What ``session.client(...)`` takes for the configured endpoint: standard retries (botocore's default
    ``legacy`` mode makes 10 attempts), bounded timeouts, and ``config`` on top."""
    # DynamoDB Local accepts any credentials but refuses requests without them.
    local = bool(settings.endpoint_url) and urlparse(settings.endpoint_url).hostname in _LOCAL_HOSTS
    return {
        "endpoint_url": settings.endpoint_url,
        "region_name": settings.region,
        "config": AioConfig(
            retries={"mode": "standard", "max_attempts": 4}, connect_timeout=5, read_timeout=10, **config
        ),
        "aws_access_key_id": "local" if local else None,
        "aws_secret_access_key": "local" if local else None,
    }


def error_code(error: ClientError) -> str:
    return str(error.response.get("Error", {}).get("Code", ""))


def translate(error: Exception, service: str = "DynamoDB") -> GatewayError:
    """Our error for a botocore failure after its retries: what a client can act on gets its code, the rest is
    logged and masked. ``service`` names who refused, for the stream's client."""
    if not isinstance(error, ClientError):
        log.warning("%s could not be reached: %s", service, error)
        return Unavailable(f"{service} could not be reached")
    code = error_code(error)
    if code in THROTTLING:
        return Throttled(f"{service} is throttling requests; try again shortly")
    if code == "ResourceNotFoundException":
        return Unavailable(
            "the table is not available" if service == "DynamoDB" else "the table's stream is not available"
        )
    if code == "ValidationException" and "exceeded the maximum allowed size" in str(error):
        return BadUserInput(
            f"the item would exceed DynamoDB's limit of {MAX_ITEM_BYTES:,} bytes", reason="ITEM_TOO_LARGE"
        )
    if code == "IdempotentParameterMismatchException":
        return Conflict("the request token was already used for another request")
    status = error.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
    if status >= 500 or code == "TransactionInProgressException":
        # DynamoDB's own failure, or an earlier attempt still being applied, after the retries: a moment later it
        # answers.
        log.warning("%s failed to answer: %s", service, error)
        return Unavailable(f"{service} failed to answer; try again shortly")
    log.error("%s refused a request: %s", service, error)
    return GatewayError(f"{service} refused a request ({code})")
