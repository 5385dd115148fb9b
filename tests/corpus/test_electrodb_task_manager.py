"""ElectroDB's task manager, written by ElectroDB itself: every access pattern of its page, against ElectroDB's answer.

The table is created and filled by `electrodb_task_manager/taskmanager.mjs` through ElectroDB's own API, and each
pattern is asked of ElectroDB there (its answer, its request and the requests it sent); the gateway serves
`taskmanager.yaml`, declared from the docs alone. The README lists what each pattern found.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.corpus.node_library import Design, served
from tests.support.gateway import Gateway

HERE = Path(__file__).parent / "electrodb_task_manager"
SCRIPT = HERE / "taskmanager.mjs"
DECLARATION = HERE / "taskmanager.yaml"

EMPLOYEE = "employee firstName lastName office title team salary manager dateHired birthday"
TASK = "task project employee status description points comments"
OFFICE = "office country state city zip address"


@pytest.fixture(scope="module")
def manager(dynamodb: Any, endpoint: str, gateway_factory: Callable[..., Gateway]) -> Iterator[Design]:
    with served(dynamodb, endpoint, gateway_factory, SCRIPT, DECLARATION) as design:
        yield design


def _nodes(connection: str) -> Callable[[Any], Any]:
    return lambda data: data[connection]["nodes"]


def _by_kind(data: Any) -> dict[str, list[Any]]:
    """A union page grouped as ElectroDB groups a collection: by entity, each in key order (an office's ``office``
    asked under an alias: an employee's, an id only index keys hold, is nullable where the office's is not)."""
    grouped: dict[str, list[Any]] = {}
    for node_ in data["workplaceMembers"]["nodes"]:
        if "officeId" in node_:
            node_ = {"office": node_.pop("officeId"), **node_}
        grouped.setdefault(node_.pop("__typename").lower(), []).append(node_)
    return grouped


def test_1_an_office_and_its_staff_are_one_query(manager: Design) -> None:
    manager.compare(
        "workplaces",
        {"office": "Portland HQ"},
        f'{{ workplaceMembers(office: "Portland HQ", first: 100) {{ nodes {{ __typename'
        f" ... on Employee {{ {EMPLOYEE} }} ... on Office {{ officeId: {OFFICE} }} }} }} }}",
        _by_kind,
    )


def test_2_an_employee_and_all_their_tasks(manager: Design) -> None:
    def assignments(data: Any) -> dict[str, list[Any]] | None:
        employee = data["employee"]
        if employee is None:
            return None
        return {"employee": [employee | {"tasks": None}], "task": employee["tasks"]["nodes"]}

    manager.compare(
        "assignments",
        {"employee": "Tyler.Walch"},
        f'{{ employee(employee: "Tyler.Walch") {{ {EMPLOYEE} tasks(first: 100) {{ nodes {{ {TASK} }} }} }} }}',
        assignments,
    )


@pytest.mark.xfail(
    strict=True,
    reason="a key range has no strict gt, only gte: the employee paid exactly 100000, whom ElectroDB's gt leaves "
    "out, is listed",
)
def test_3_junior_developers_paid_more_than_100000(manager: Design) -> None:
    manager.compare(
        "juniorDevelopers",
        {"title": "Junior Software Engineer", "salary": "100000"},
        f'{{ roleEmployees(title: "Junior Software Engineer", salary: {{gte: "100000"}}, first: 100)'
        f" {{ nodes {{ {EMPLOYEE} }} }} }}",
        _nodes("roleEmployees"),
    )


@pytest.mark.xfail(
    strict=True,
    reason="the answer and its 1 Query are ElectroDB's, but explain plans a filtered page at its worst case, up to "
    "TABLEGRAPH_FILTER_READ_CALLS (3) Queries, not the 1 sent",
)
def test_4_open_tasks_of_a_project_of_at_most_13_points(manager: Design) -> None:
    # A filter has no lte: between from 0 is the closest a client can ask.
    manager.compare(
        "openTasks",
        {"status": "open", "project": "135-53", "points": 13},
        f'{{ statusTasks(status: "open", project: "135-53", where: {{points: {{between: [0, 13]}}}}, first: 100)'
        f" {{ nodes {{ {TASK} }} }} }}",
        _nodes("statusTasks"),
    )


@pytest.mark.xfail(
    strict=True,
    reason="a range over dateHired, a leading part of the composite sort key gsi2sk, is refused at build, and the "
    "filter that stands in for it keeps the last day, which ElectroDB's key BETWEEN leaves out",
)
def test_5_marketing_hired_between_two_dates(manager: Design) -> None:
    manager.compare(
        "recentHires",
        {"team": "marketing", "from": "2021-11-27", "to": "2023-11-27"},
        f'{{ teamEmployees(team: "marketing", where: {{dateHired: {{between: ["2021-11-27", "2023-11-27"]}}}},'
        f" first: 100) {{ nodes {{ {EMPLOYEE} }} }} }}",
        _nodes("teamEmployees"),
    )


def test_6_a_task_by_its_key(manager: Design) -> None:
    key = {"task": "Design-Review", "project": "135-53", "employee": "Tyler.Walch"}
    manager.compare(
        "getTask",
        key,
        f'{{ task(task: "Design-Review", project: "135-53", employee: "Tyler.Walch") {{ {TASK} }} }}',
        lambda data: data["task"],
    )


def test_7_an_office_by_its_key(manager: Design) -> None:
    key = {"country": "US", "state": "OR", "city": "Portland", "zip": "97201", "office": "Portland HQ"}
    manager.compare(
        "getOffice",
        key,
        '{ office(country: "US", state: "OR", city: "Portland", zip: "97201", office: "Portland HQ")'
        f" {{ {OFFICE} }} }}",
        lambda data: data["office"],
    )


def test_8_an_employee_with_a_manager_by_their_key(manager: Design) -> None:
    manager.compare(
        "getEmployee",
        {"employee": "Ann.Brooks"},
        f'{{ employee(employee: "Ann.Brooks") {{ {EMPLOYEE} }} }}',
        lambda data: data["employee"],
    )


CREATE = (
    "mutation($input: CreateTaskInput!) { createTask(input: $input) { __typename ... on MutationError { message } } }"
)


def test_9_a_task_the_gateway_creates_is_read_back_by_electrodb(manager: Design) -> None:
    task = {"task": "Ship-Docs", "project": "135-53", "employee": "Tyler.Walch", "status": "open", "points": 3}
    body = manager.gateway.query(CREATE, {"input": task | {"description": "Docs for the release"}})
    assert body["data"] == {"createTask": {"__typename": "Task"}}
    _, requests = manager.library("createTask", task | {"task": "Ship-Docs-By-ElectroDB"})
    assert body["extensions"]["dynamodb"]["calls"] <= requests
    found, _ = manager.library("getTask", {key: task[key] for key in ("task", "project", "employee")})
    assert found == task | {"description": "Docs for the release"}


def test_9b_even_with_keys_already_lower_case_electrodb_disowns_what_the_gateway_writes(manager: Design) -> None:
    task = {"task": "ship-notes", "project": "135-53", "employee": "ann.brooks", "status": "open", "points": 2}
    body = manager.gateway.query(CREATE, {"input": task})
    assert body["data"] == {"createTask": {"__typename": "Task"}}
    found, _ = manager.library("getTask", {key: task[key] for key in ("task", "project", "employee")})
    assert found == task


@pytest.mark.xfail(
    strict=True,
    reason="a task's status is in gsi4's partition key, so it is an id, and updateTask takes no status: an id "
    "of an index that is not sparse cannot move (ElectroDB's set rewrites gsi1sk, gsi3sk and gsi4pk in one UpdateItem)",
)
def test_10_a_task_closed_through_the_gateway_is_closed_for_electrodb(manager: Design) -> None:
    key = {"task": "Fix-Login", "project": "135-54", "employee": "Ann.Brooks"}
    body = manager.gateway.query(
        "mutation($input: UpdateTaskInput!) { updateTask(input: $input) { __typename } }",
        {"input": key | {"expectedVersion": 0, "status": "closed"}},
    )
    assert body.get("data") == {"updateTask": {"__typename": "Task"}}, body.get("errors")
    _, requests = manager.library(
        "setTaskStatus", {"task": "Refactor-API", "project": "135-54", "employee": "Sam.OBrien", "status": "closed"}
    )
    assert body["extensions"]["dynamodb"]["calls"] <= requests
    found, _ = manager.library("getTask", key)
    assert found["status"] == "closed"


def test_11_a_task_deleted_through_the_gateway_is_gone_for_electrodb(manager: Design) -> None:
    key = {"task": "Audit-Budget", "project": "Apollo-7", "employee": "Dominique.Johnson"}
    assert manager.library("getTask", key)[0] is not None
    body = manager.gateway.query(
        "mutation($input: DeleteTaskInput!) { deleteTask(input: $input) { __typename } }", {"input": key}
    )
    assert body["data"] == {"deleteTask": {"__typename": "Deleted"}}
    _, requests = manager.library(
        "deleteTask", {"task": "Onboard-Hire", "project": "Apollo-7", "employee": "Ines.Garcia"}
    )
    assert body["extensions"]["dynamodb"]["calls"] <= requests
    assert manager.library("getTask", key)[0] is None


def test_check_full_finds_no_mismatch_in_the_table_electrodb_wrote(
    manager: Design, capsys: pytest.CaptureFixture[str]
) -> None:
    manager.check_finds_no_mismatch(DECLARATION, lambda: capsys.readouterr().out)
