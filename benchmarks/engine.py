"""The DynamoDB the benchmark runs on: a given endpoint, or its own DynamoDB Local with tables kept in a cache dir."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import aioboto3
from aiobotocore.config import AioConfig

from gateway.server.local import DynamoDBLocal

DATA_DIR = Path(".bench-data")
"""Where the managed engine's tables are kept between runs: a 10^6-item table is built once and reused."""

_RAM = Path("/dev/shm")


@contextmanager
def engine(endpoint_url: str | None, data_dir: Path = DATA_DIR) -> Iterator[str]:
    """The endpoint URL to use: the one given, or a DynamoDB Local of our own for the duration.

    DynamoDB Local persists in SQLite and syncs every write to disk, about 350 items/s here, against 1,400/s in
    memory. So where the OS has a RAM disk the engine runs on a copy of the cache there, and the copy is saved
    back when the engine stops; a load that is interrupted leaves the cache as it was.
    """
    if endpoint_url is not None:
        yield endpoint_url
        return
    data_dir.mkdir(parents=True, exist_ok=True)
    if not _RAM.is_dir():
        with DynamoDBLocal(data_dir=data_dir) as local:
            yield local.endpoint_url
        return
    with tempfile.TemporaryDirectory(prefix="tablegraph-bench-", dir=_RAM) as scratch:
        work = Path(scratch)
        for kept in data_dir.glob("*.db"):
            shutil.copy2(kept, work / kept.name)
        try:
            with DynamoDBLocal(data_dir=work) as local:
                yield local.endpoint_url
        finally:
            # Safe even after a failed run: a table whose load did not finish has no marker and is rebuilt.
            for used in work.glob("*.db"):
                _save(used, data_dir / used.name)


def _save(used: Path, kept: Path) -> None:
    if kept.exists() and _stamp(kept) == _stamp(used):
        return
    partial = kept.with_name(f"{kept.name}.partial")
    shutil.copy2(used, partial)
    partial.replace(kept)


def _stamp(path: Path) -> tuple[int, int]:
    stat = path.stat()
    return stat.st_size, stat.st_mtime_ns


@asynccontextmanager
async def client(endpoint_url: str, pool: int = 64) -> AsyncIterator[Any]:
    """A plain aioboto3 client as an application would make one: standard retries, a pool sized for load."""
    config = AioConfig(retries={"mode": "standard", "max_attempts": 4}, max_pool_connections=pool)
    async with aioboto3.Session().client(
        "dynamodb",
        endpoint_url=endpoint_url,
        region_name="us-east-1",
        aws_access_key_id="bench",
        aws_secret_access_key="bench",
        config=config,
    ) as dynamodb:
        yield dynamodb
