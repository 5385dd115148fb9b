"""Write-sharded collections: a giant workspace's projects over eight partitions (schema/giant.py), read as one.

Each page is eight Queries in one round, merged in sort order; walking page by page, either way, gives every project
once, in the order one partition would (checked against a plain-Python sort). Writes land in the partition the hash
of the project's id names, which is checked here with plain boto3 and a hash written out again.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.sharding import compare
from gateway.design.declaration import Declaration
from gateway.design.keys import KeyTemplate, shard_of
from gateway.design.model import Collection, Index, KeyShape, Model
from schema.giant import GIANT, SHARDS, design
from tests.support.gateway import Gateway

PAGE = """query($ws: ID!, $first: Int, $after: String, $last: Int, $before: String, $order: SortOrder,
  $where: WorkspaceProjectsFilter) {
  workspace(workspaceId: $ws) { projects(first: $first, after: $after, last: $last, before: $before, order: $order,
    where: $where) { totalCount nodes { projectId } pageInfo { hasNextPage hasPreviousPage startCursor endCursor
    readLimitReached } } } }"""
CREATE = """mutation($input: CreateProjectInput!) { createProject(input: $input) { __typename
  ... on Project { projectId } } }"""


def _shard(project_id: str) -> int:
    """The shard, computed here independently of the gateway: SHA-256, first 8 bytes big-endian, modulo 8."""
    return int.from_bytes(hashlib.sha256(project_id.encode()).digest()[:8], "big") % SHARDS


@pytest.fixture(scope="module")
def giant(served: Callable[..., Gateway]) -> Gateway:
    return served(GIANT)


@pytest.fixture(scope="module")
def one_call(gateway_factory: Callable[..., Gateway], giant: Gateway) -> Iterator[Gateway]:
    """The same table with a filtered page's budget of one Query per shard."""
    with gateway_factory(giant.table, declaration=GIANT, filter_read_calls=1) as running:
        yield running


def _put(dynamodb: Any, table: str, ws: str, project_ids: list[str], paused: frozenset[str] = frozenset()) -> None:
    """A workspace and its projects as any client would write them, with plain boto3 and the keys spelled out."""
    requests = [{"PK": f"WS#{ws}", "SK": "META", "displayName": "W", "projectCount": {"N": str(len(project_ids))}}]
    for project_id in project_ids:
        status = "paused" if project_id in paused else "active"
        requests.append(
            {"PK": f"WS#{ws}#{_shard(project_id)}", "SK": f"PROJ#{project_id}", "title": "T", "status": status}
        )
    for start in range(0, len(requests), 25):
        batch = [
            {"PutRequest": {"Item": {k: v if isinstance(v, dict) else {"S": v} for k, v in item.items()}}}
            for item in requests[start : start + 25]
        ]
        dynamodb.batch_write_item(RequestItems={table: batch})


def _page(gateway: Gateway, ws: str, **variables: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    body = gateway.query(PAGE, {"ws": ws, **variables})
    assert "errors" not in body, body["errors"]
    return body["data"]["workspace"]["projects"], body["extensions"]["dynamodb"]


def _walk(gateway: Gateway, ws: str, size: int, backward: bool = False, **variables: Any) -> list[str]:
    """Every project, page by page; each page costs one Query per shard, in the round of the workspace's read."""
    seen: list[str] = []
    cursor = None
    for _ in range(200):
        if backward:
            page, cost = _page(gateway, ws, last=size, before=cursor, **variables)
        else:
            page, cost = _page(gateway, ws, first=size, after=cursor, **variables)
        assert cost["operations"] == {"BatchGetItem": 1, "Query": SHARDS}
        assert cost["rounds"] == 1
        ids = [node["projectId"] for node in page["nodes"]]
        assert len(ids) <= size
        seen = ids + seen if backward else seen + ids
        info = page["pageInfo"]
        if not (info["hasPreviousPage"] if backward else info["hasNextPage"]):
            return seen
        cursor = info["startCursor"] if backward else info["endCursor"]
    raise AssertionError("the walk did not end")


# Ids as clients choose them, non-ASCII too: DynamoDB orders by UTF-8 bytes, which is Python's code point order.
_IDS = st.lists(
    st.text(st.characters(blacklist_categories=("Cc", "Cs"), blacklist_characters="#"), min_size=1, max_size=6),
    max_size=14,
    unique=True,
)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(project_ids=_IDS, size=st.integers(1, 6))
def test_walking_a_sharded_collection_both_ways_gives_the_order_of_one_partition(
    giant: Gateway, dynamodb: Any, project_ids: list[str], size: int
) -> None:
    ws = f"ws-{uuid.uuid4().hex[:8]}"
    _put(dynamodb, giant.table, ws, project_ids)
    ordered = sorted(project_ids)
    assert _walk(giant, ws, size) == ordered
    assert _walk(giant, ws, size, backward=True) == ordered
    assert _walk(giant, ws, size, order="DESCENDING") == ordered[::-1]
    assert _walk(giant, ws, size, backward=True, order="DESCENDING") == ordered[::-1]


def test_a_cursor_resumes_either_way_from_the_same_member(giant: Gateway, dynamodb: Any) -> None:
    """The cursor of a member in the middle of a page: after it and before it part the collection at that member."""
    ws = f"ws-{uuid.uuid4().hex[:8]}"
    project_ids = [f"p{n:02d}" for n in range(30)]
    _put(dynamodb, giant.table, ws, project_ids)
    first, _ = _page(giant, ws, first=12)
    assert first["totalCount"] == 30
    middle = first["nodes"][7]["projectId"]
    body = giant.query(
        "query($ws: ID!) { workspace(workspaceId: $ws) { projects(first: 12) { edges { cursor } } } }", {"ws": ws}
    )
    cursor = body["data"]["workspace"]["projects"]["edges"][7]["cursor"]
    after, _ = _page(giant, ws, first=30, after=cursor)
    before, _ = _page(giant, ws, last=30, before=cursor)
    assert middle == "p07"
    assert [n["projectId"] for n in before["nodes"]] == project_ids[:7]
    assert [n["projectId"] for n in after["nodes"]] == project_ids[8:]


def test_a_filtered_sharded_page_fills_and_a_stopped_one_resumes_where_it_stopped(
    giant: Gateway, one_call: Gateway, dynamodb: Any
) -> None:
    """One in five paused: a page of three reads on in every shard until it fills; with a budget of one Query per
    shard, pages stop short, say so, and walking on still gives every paused project once, in order."""
    ws = f"ws-{uuid.uuid4().hex[:8]}"
    project_ids = [f"p{n:02d}" for n in range(60)]
    paused = frozenset(one for n, one in enumerate(project_ids) if n % 5 == 0)
    _put(dynamodb, giant.table, ws, project_ids, paused)
    where = {"status": {"eq": "paused"}}
    page, cost = _page(giant, ws, first=3, where=where)
    assert [n["projectId"] for n in page["nodes"]] == sorted(paused)[:3]
    assert page["pageInfo"]["readLimitReached"] is False
    assert cost["operations"]["Query"] % SHARDS == 0
    seen: list[str] = []
    stops = 0
    after = None
    for _ in range(100):
        page, cost = _page(one_call, ws, first=3, after=after, where=where)
        assert cost["operations"] == {"BatchGetItem": 1, "Query": SHARDS}
        seen += [n["projectId"] for n in page["nodes"]]
        stops += page["pageInfo"]["readLimitReached"]
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    assert seen == sorted(paused)
    assert stops > 0


def test_writes_land_in_the_shard_the_hash_of_the_id_names(giant: Gateway, dynamodb: Any) -> None:
    """Creates, updates and deletes find the partition from the id alone: no Query, no read to locate it."""
    ws = f"ws-{uuid.uuid4().hex[:8]}"
    _put(dynamodb, giant.table, ws, [])
    created = []
    for n in range(12):
        body = giant.query(CREATE, {"input": {"workspaceId": ws, "projectId": f"new-{n}", "title": f"T{n}"}})
        assert body["data"]["createProject"]["__typename"] == "Project", body
        assert "Query" not in body["extensions"]["dynamodb"]["operations"]
        created.append(f"new-{n}")
    assert len({_shard(one) for one in created}) > 1
    for project_id in created:
        key = {"PK": {"S": f"WS#{ws}#{_shard(project_id)}"}, "SK": {"S": f"PROJ#{project_id}"}}
        stored = dynamodb.get_item(TableName=giant.table, Key=key, ConsistentRead=True)["Item"]
        assert stored["title"]["S"] == f"T{created.index(project_id)}"
    update = """mutation($input: UpdateProjectInput!) { updateProject(input: $input) { __typename } }"""
    body = giant.query(
        update, {"input": {"workspaceId": ws, "projectId": "new-3", "expectedVersion": 1, "title": "Renamed"}}
    )
    assert body["data"]["updateProject"]["__typename"] == "Project", body
    assert "Query" not in body["extensions"]["dynamodb"]["operations"]
    key = {"PK": {"S": f"WS#{ws}#{_shard('new-3')}"}, "SK": {"S": "PROJ#new-3"}}
    assert dynamodb.get_item(TableName=giant.table, Key=key, ConsistentRead=True)["Item"]["title"]["S"] == "Renamed"
    delete = """mutation($input: DeleteProjectInput!) { deleteProject(input: $input) { __typename } }"""
    body = giant.query(delete, {"input": {"workspaceId": ws, "projectId": "new-3", "expectedVersion": 2}})
    assert body["data"]["deleteProject"]["__typename"] == "Deleted", body
    assert "Item" not in dynamodb.get_item(TableName=giant.table, Key=key, ConsistentRead=True)
    page, _ = _page(giant, ws, first=50)
    assert page["totalCount"] == 11
    assert [n["projectId"] for n in page["nodes"]] == sorted(set(created) - {"new-3"})


def test_the_count_stays_exact_under_concurrent_creates(giant: Gateway, dynamodb: Any) -> None:
    ws = f"ws-{uuid.uuid4().hex[:8]}"
    _put(dynamodb, giant.table, ws, [])

    def create(n: int) -> str:
        variables = {"input": {"workspaceId": ws, "projectId": f"c{n:02d}", "title": "T"}}
        with httpx.Client(base_url=giant.url, timeout=30) as client:
            response = client.post("/graphql", json={"query": CREATE, "variables": variables})
        return str(response.json()["data"]["createProject"]["__typename"])

    with ThreadPoolExecutor(8) as pool:
        assert set(pool.map(create, range(24))) == {"Project"}
    page, _ = _page(giant, ws, first=50)
    assert page["totalCount"] == 24
    assert [n["projectId"] for n in page["nodes"]] == [f"c{n:02d}" for n in range(24)]


def test_explain_shows_one_query_per_shard_in_one_round(giant: Gateway) -> None:
    response = giant.http.post(
        "/graphql",
        json={"query": PAGE, "variables": {"ws": "anything", "first": 5}},
        headers={"X-Tablegraph-Explain": "1"},
    )
    explained = response.json()["extensions"]["explain"]
    (queries,) = [one for one in explained["requests"] if one["operation"] == "Query"]
    assert queries["calls"] == SHARDS
    assert queries["round"] == 1
    assert queries["limit"] == 6
    assert queries["partitions"] == [f"WS#{{workspaceId}}#{shard}" for shard in range(SHARDS)]
    assert queries["keyCondition"] == "PK = WS#{workspaceId}#<shard> AND begins_with(SK, PROJ#)"
    assert explained["calls"] == SHARDS + 1
    assert explained["rounds"] == 1


def test_the_shard_is_stable_and_spreads_ids() -> None:
    ids = [f"id-{n}" for n in range(800)]
    counts = [sum(1 for one in ids if shard_of(one, SHARDS) == shard) for shard in range(SHARDS)]
    assert [shard_of(one, SHARDS) for one in ids] == [_shard(one) for one in ids]
    assert min(counts) > 60


@pytest.mark.parametrize(
    ("pk", "sk", "message"),
    [
        ("WS#{workspaceId}#{projectId%8}", "PROJ", "which its sort key lacks"),
        ("WS#{workspaceId}#{projectId%1}", "PROJ#{projectId}", "2 to 16 shards"),
        ("WS#{workspaceId}#{projectId%17}", "PROJ#{projectId}", "2 to 16 shards"),
        ("WS#{workspaceId}", "PROJ#{projectId%4}", "belongs in the partition key"),
    ],
)
def test_a_shard_segment_that_cannot_be_served_is_refused_when_the_model_is_built(
    pk: str, sk: str, message: str
) -> None:
    model = design(SHARDS)
    workspace, project = model.entities
    with pytest.raises(ValueError, match=message):
        broken = type(project)(project.name, {None: KeyShape.of(pk, sk)}, project.attributes)
        Model(model.table, model.indexes, (workspace, broken))


def test_the_giant_declaration_serves_its_seed() -> None:
    assert isinstance(GIANT, Declaration)
    items = list(GIANT.seed()) if GIANT.seed else []
    shards = {item["PK"] for item in items if item["SK"].startswith("PROJ#")}
    assert shards == {f"WS#acme#{shard}" for shard in range(SHARDS)}


def test_deleting_the_workspace_with_cascade_deletes_the_projects_of_every_shard(giant: Gateway, dynamodb: Any) -> None:
    ws = f"ws-{uuid.uuid4().hex[:8]}"
    project_ids = [f"p{n:02d}" for n in range(20)]
    _put(dynamodb, giant.table, ws, project_ids)
    delete = """mutation($input: DeleteWorkspaceInput!) { deleteWorkspace(input: $input) { __typename } }"""
    body = giant.query(delete, {"input": {"workspaceId": ws, "expectedVersion": 0, "cascade": True}})
    assert body["data"]["deleteWorkspace"]["__typename"] == "Deleted", body
    assert body["extensions"]["dynamodb"]["operations"]["Query"] == SHARDS
    for shard in range(SHARDS):
        left = dynamodb.query(
            TableName=giant.table,
            KeyConditionExpression="PK = :pk",
            ExpressionAttributeValues={":pk": {"S": f"WS#{ws}#{shard}"}},
        )
        assert left["Items"] == []


def test_the_benchmark_reads_the_same_page_from_eight_shards_and_from_one_partition(endpoint: str) -> None:
    sharded, single = compare(endpoint, projects=60, requests=2, first=10)
    assert sharded.first_page == single.first_page == [f"p{n:06d}" for n in range(10)]
    assert (sharded.calls, sharded.rounds) == (SHARDS + 1, 1)
    assert (single.calls, single.rounds) == (1, 1)


def test_a_sharded_collection_in_an_index_is_refused_when_the_model_is_built() -> None:
    model = design(SHARDS)
    workspace, project = model.entities
    gsi = Index("GSI1", "GSI1PK", "GSI1SK")
    in_gsi = type(project)(
        project.name,
        {
            None: KeyShape.of("P#{projectId}", "P"),
            "GSI1": KeyShape.of("WS#{workspaceId}#{projectId%4}", "P#{projectId}"),
        },
    )
    with pytest.raises(ValueError, match="read from the table's key"):
        Model(
            model.table,
            (*model.indexes, gsi),
            (workspace, in_gsi),
            (Collection("Workspace.projects", workspace, in_gsi, "GSI1"),),
        )


def test_a_shard_segment_is_computed_when_a_key_is_formatted_and_dropped_when_it_is_parsed() -> None:
    template = KeyTemplate("WS#{workspaceId}#{projectId%8}")
    ids = {"workspaceId": "acme", "projectId": "p1"}
    assert template.fields == ("workspaceId",)
    assert (template.sharded_by, template.shards) == ("projectId", 8)
    assert template.format(ids) == f"WS#acme#{_shard('p1')}"
    assert template.partition({"workspaceId": "acme"}, 5) == "WS#acme#5"
    assert template.parse("WS#acme#5") == {"workspaceId": "acme"}
    assert template.parse("WS#acme#x") is None and template.parse("WS#acme#05") is None
    assert template.prefix({"workspaceId": "acme"}) == "WS#acme#"
