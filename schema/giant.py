"""The giant workspace: its projects spread over eight partitions, so no one partition takes its traffic.

| entity    | PK                         | SK                 |
|-----------|----------------------------|--------------------|
| Workspace | WS#<workspaceId>           | META               |
| Project   | WS#<workspaceId>#<shard>   | PROJ#<projectId>   |

``<shard>`` is ``{projectId%8}``: the first 8 bytes of the SHA-256 of the project id, big-endian, modulo 8
(``gateway.keys.shard_of``). A create, an update or a delete of a project finds its partition from its id with no
read; a page of a workspace's projects is eight Queries sent at once and merged by ``PROJ#<projectId>``, which
orders the projects of every shard, and one position in that order resumes them all. The workspace's
``projectCount`` is kept exact by the writes, as for any counted collection.

``design(1)`` is the same design on one partition (``WS#<workspaceId>``), what the benchmark compares it with.
"""

from __future__ import annotations

from collections.abc import Iterator

from gateway import Attribute, Collection, Declaration, Entity, Index, Item, KeyShape, Model

SHARDS = 8
STATUSES = {"active": "Being worked on.", "paused": "On hold.", "archived": "Finished or abandoned."}


def design(shards: int) -> Model:
    """The giant workspace's key design over ``shards`` partitions (1: no shard segment)."""
    partition = "WS#{workspaceId}" if shards == 1 else "WS#{workspaceId}#{projectId%" + str(shards) + "}"
    workspace = Entity(
        "Workspace",
        {None: KeyShape.of("WS#{workspaceId}", "META")},
        {
            "displayName": Attribute("S", "The name people see.", required=True),
            "projectCount": Attribute("INT", "How many projects the workspace has, kept exact.", writable=False),
        },
        description="A tenant's workspace, large enough that its projects are spread over several partitions.",
    )
    project = Entity(
        "Project",
        {None: KeyShape.of(partition, "PROJ#{projectId}")},
        {
            "title": Attribute("S", "The project's title.", required=True),
            "status": Attribute("S", "Where the project stands.", enum=STATUSES, default="active"),
        },
        description="A project of a workspace, in the partition its id's hash picks.",
    )
    projects = Collection(
        "Workspace.projects",
        workspace,
        project,
        counter="projectCount",
        description="By project id, across every shard.",
        filters=("status",),
    )
    return Model(
        table="giant", indexes=(Index(None, "PK", "SK"),), entities=(workspace, project), collections=(projects,)
    )


MODEL = design(SHARDS)
WORKSPACE = MODEL.entities[0]
PROJECT = MODEL.entities[1]


def seed() -> Iterator[Item]:
    """Workspace ``acme`` with 100 projects, one in four paused; workspace ``tiny`` with none."""
    yield MODEL.item(WORKSPACE, {"workspaceId": "acme"}, {"displayName": "Acme", "projectCount": 100})
    yield MODEL.item(WORKSPACE, {"workspaceId": "tiny"}, {"displayName": "Tiny", "projectCount": 0})
    for n in range(100):
        status = "paused" if n % 4 == 0 else "active"
        yield MODEL.item(
            PROJECT, {"workspaceId": "acme", "projectId": f"p{n:03d}"}, {"title": f"Project {n}", "status": status}
        )


GIANT = Declaration(MODEL, seed=seed)
"""``tablegraph serve --model schema.giant:GIANT``: no tenancy, so every caller reads and admins write."""
