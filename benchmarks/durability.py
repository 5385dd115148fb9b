"""SIGKILL a DynamoDB Local kept on disk (``-dbPath``) while writes run; count acknowledged writes lost on restart.

The gateway is not involved: four clients send plain boto3 writes straight to the engine, each write is noted once
DynamoDB Local has answered it, the engine is killed after 1 to 3 s, started again on the same folder, and every
acknowledged write is read back (strongly consistent). ``transact`` sends what a token-carrying create sends (a
TransactWriteItems of the item, a counter ADD and the token's record); ``put`` sends a PutItem.

``python -m benchmarks.durability transact --rounds 12 [--graceful]`` prints, per round, the writes acknowledged and
lost, and for each lost one how long before the kill it was acknowledged.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config

from gateway.server.local import DynamoDBLocal

TABLE = "durability"
WRITERS = 4


def _client(url: str) -> Any:
    config = Config(retries={"max_attempts": 1}, connect_timeout=1, read_timeout=2)
    return boto3.client(
        "dynamodb",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
        config=config,
    )


def _write(client: Any, mode: str, key: str) -> None:
    if mode == "put":
        client.put_item(TableName=TABLE, Item={"PK": {"S": f"I#{key}"}, "SK": {"S": "I"}})
        return
    client.transact_write_items(
        TransactItems=[
            {"Put": {"TableName": TABLE, "Item": {"PK": {"S": f"I#{key}"}, "SK": {"S": "I"}}}},
            {
                "Update": {
                    "TableName": TABLE,
                    "Key": {"PK": {"S": "COUNTER"}, "SK": {"S": "C"}},
                    "UpdateExpression": "ADD n :one",
                    "ExpressionAttributeValues": {":one": {"N": "1"}},
                }
            },
            {"Put": {"TableName": TABLE, "Item": {"PK": {"S": f"T#{key}"}, "SK": {"S": "T"}}}},
        ]
    )


def _round(engine: DynamoDBLocal, mode: str, graceful: bool) -> list[tuple[str, float]]:
    """Writes until the engine is killed (stopped, when ``graceful``); what was acknowledged, with when."""
    acknowledged: list[tuple[str, float]] = []
    stop = threading.Event()

    def work() -> None:
        client = _client(engine.endpoint_url)
        while not stop.is_set():
            key = uuid.uuid4().hex
            try:
                _write(client, mode, key)
            except Exception:  # the engine is gone: nothing after this counts
                if stop.is_set():
                    return
                time.sleep(0.01)
                continue
            acknowledged.append((key, time.monotonic()))

    writers = [threading.Thread(target=work) for _ in range(WRITERS)]
    for writer in writers:
        writer.start()
    time.sleep(random.uniform(1.0, 3.0))
    if graceful:
        engine.stop()
    else:
        engine.kill()
    stop.set()
    for writer in writers:
        writer.join()
    return acknowledged


def run(mode: str, rounds: int, data: Path, graceful: bool = False) -> tuple[int, int]:
    engine = DynamoDBLocal(data_dir=data)
    engine.start()
    client = _client(engine.endpoint_url)
    client.create_table(
        TableName=TABLE,
        KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "PK", "AttributeType": "S"},
            {"AttributeName": "SK", "AttributeType": "S"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    total = lost_total = 0
    try:
        for number in range(rounds):
            acknowledged = _round(engine, mode, graceful)
            killed = time.monotonic()
            engine = DynamoDBLocal(data_dir=data)
            engine.start()
            client = _client(engine.endpoint_url)
            lost = [
                round((killed - at) * 1000)
                for key, at in acknowledged
                if "Item"
                not in client.get_item(
                    TableName=TABLE, Key={"PK": {"S": f"I#{key}"}, "SK": {"S": "I"}}, ConsistentRead=True
                )
            ]
            total, lost_total = total + len(acknowledged), lost_total + len(lost)
            print(f"round {number}: acknowledged {len(acknowledged)}, lost {len(lost)}, ms before the kill: {lost}")
    finally:
        engine.stop()
    print(f"{mode}: {rounds} rounds, {total} writes acknowledged, {lost_total} lost")
    return total, lost_total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["transact", "put"])
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--graceful", action="store_true", help="stop the engine with SIGTERM instead")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tablegraph-durability-") as data:
        run(arguments.mode, arguments.rounds, Path(data), arguments.graceful)


if __name__ == "__main__":
    main()
