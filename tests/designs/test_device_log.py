"""AWS's device state log design, which the engine did not write, served from a declaration made from the docs alone.

The table (tests/support/device_log.py) is created and filled with plain boto3 in its stored spelling: key
attributes ``DeviceID``/``State#Date``, GSI1 on ``Operator``/``Date``, GSI2 on ``EscalatedTo``/``State#Date``. Every
access pattern its README lists is asked through the gateway; its answer is compared with one worked out here from
the fixture's items in plain Python (no gateway code), and its DynamoDB calls and rounds are counted on the wire.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from gateway import Entity, KeyShape, Model
from tests.support import device_log
from tests.support.device_log import DEVICE_LOG, DEVICE_LOGS, LOG_MODEL
from tests.support.gateway import Gateway, answered, assert_pattern, fill
from tests.support.mutations import mutate

ITEMS = device_log.items()
SORT = "State#Date"


def _device(device: str, prefix: str = "") -> list[dict[str, Any]]:
    """A device's logs whose sort key starts with ``prefix``, in key order (plain Python)."""
    chosen = [i for i in ITEMS if i["DeviceID"] == device and i[SORT].startswith(prefix)]
    return sorted(chosen, key=lambda i: i[SORT].encode())


def _gsi(pk: str, sk: str, value: str, keep: Callable[[str], bool] = lambda _: True) -> list[dict[str, Any]]:
    """An index's partition ``value``: the items holding both its keys, in sort-key order (plain Python)."""
    chosen = [i for i in ITEMS if i.get(pk) == value and sk in i and keep(i[sk])]
    return sorted(chosen, key=lambda i: i[sk].encode())


def _log(item: dict[str, Any]) -> dict[str, str]:
    """A log as the selection ``{ deviceId state date }`` serves it, read from the stored attributes."""
    return {"deviceId": item["DeviceID"].removeprefix("d#"), "state": item["State"], "date": item["Date"]}


def _create(dynamodb: Any, name: str) -> None:
    """The table as the design's model defines it: string keys, two GSIs projecting everything."""
    indexes = [
        {
            "IndexName": index,
            "KeySchema": [{"AttributeName": pk, "KeyType": "HASH"}, {"AttributeName": sk, "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"},
        }
        for index, pk, sk in (("GSI1", "Operator", "Date"), ("GSI2", "EscalatedTo", SORT))
    ]
    keys = ("DeviceID", SORT, "Operator", "Date", "EscalatedTo")
    dynamodb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "DeviceID", "KeyType": "HASH"}, {"AttributeName": SORT, "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": key, "AttributeType": "S"} for key in keys],
        BillingMode="PAY_PER_REQUEST",
        GlobalSecondaryIndexes=indexes,
    )


@pytest.fixture(scope="module")
def logs(dynamodb: Any, endpoint: str, gateway_factory: Callable[..., Gateway]) -> Iterator[tuple[Gateway, str]]:
    name = f"devicelog-{uuid.uuid4().hex[:8]}"
    _create(dynamodb, name)
    fill(endpoint, name, ITEMS)
    with gateway_factory(name, declaration=DEVICE_LOGS) as running:
        yield running, name
    dynamodb.delete_table(TableName=name)


LOG = "nodes { deviceId state date }"
README_RANGE = ("2020-04-20", "2020-04-25")

# Each access pattern of the README: the query, the answer worked out from the fixture, (calls, rounds) on the wire.
READS: list[Any] = [
    pytest.param(
        # Pattern 1: DeviceID = d#12345 AND begins_with(State#Date, "WARNING1#"), descending. WARNING10 is left out.
        '{ logsOfDevice(deviceId: "12345", state: "WARNING1") { ' + LOG + " } }",
        {"logsOfDevice": {"nodes": [_log(i) for i in reversed(_device("d#12345", "WARNING1#"))]}},
        (1, 1),
        id="1-device-logs-of-a-state-newest-first",
    ),
    pytest.param(
        # Pattern 1 nested under the device, which has no item: nothing more is read.
        '{ device(deviceId: "12345") { deviceId logs(state: "WARNING1", first: 2) { ' + LOG + " } } }",
        {
            "device": {
                "deviceId": "12345",
                "logs": {"nodes": [_log(i) for i in list(reversed(_device("d#12345", "WARNING1#")))[:2]]},
            }
        },
        (1, 1),
        id="1-nested-under-the-device",
    ),
    pytest.param(
        # The README's comparison query: every log of the device, descending, with no condition on the sort key.
        '{ logsOfDevice(deviceId: "12345") { ' + LOG + " } }",
        {"logsOfDevice": {"nodes": [_log(i) for i in reversed(_device("d#12345"))]}},
        (1, 1),
        id="1-every-log-of-a-device",
    ),
    pytest.param(
        # Pattern 2: GSI1, Operator = Liz AND Date BETWEEN 2020-04-20 AND 2020-04-25, ascending; inclusive byte
        # bounds, so 2020-04-20T00:00:00 is in and 2020-04-25T00:00:00 is out, as the README's own query does.
        '{ operatorLogs(operator: "Liz", date: {between: ["2020-04-20", "2020-04-25"]}) { ' + LOG + " } }",
        {
            "operatorLogs": {
                "nodes": [
                    _log(i) for i in _gsi("Operator", "Date", "Liz", lambda d: README_RANGE[0] <= d <= README_RANGE[1])
                ]
            }
        },
        (1, 1),
        id="2-operator-logs-between-two-dates",
    ),
    pytest.param(
        # Pattern 3: GSI2, EscalatedTo = Sara, ascending; the sparse index holds the escalated logs alone.
        '{ supervisorEscalations(supervisor: "Sara") { ' + LOG + " } }",
        {"supervisorEscalations": {"nodes": [_log(i) for i in _gsi("EscalatedTo", SORT, "Sara")]}},
        (1, 1),
        id="3-supervisor-escalations",
    ),
    pytest.param(
        # Pattern 4: GSI2, EscalatedTo = Sara AND begins_with(State#Date, "WARNING4#").
        '{ supervisorEscalations(supervisor: "Sara", state: "WARNING4") { ' + LOG + " } }",
        {
            "supervisorEscalations": {
                "nodes": [_log(i) for i in _gsi("EscalatedTo", SORT, "Sara", lambda s: s.startswith("WARNING4#"))]
            }
        },
        (1, 1),
        id="4-supervisor-escalations-of-a-state",
    ),
    pytest.param(
        # Pattern 5: GSI2, EscalatedTo = Sara AND begins_with(State#Date, "WARNING4#2020-04-27"): the state a level,
        # the day a range after it: 2020-04-28, and WARNING5 on the day, are left out.
        '{ supervisorEscalations(supervisor: "Sara", state: "WARNING4", date: {beginsWith: "2020-04-27"}) { '
        + LOG
        + " } }",
        {
            "supervisorEscalations": {
                "nodes": [
                    _log(i) for i in _gsi("EscalatedTo", SORT, "Sara", lambda s: s.startswith("WARNING4#2020-04-27"))
                ]
            }
        },
        (1, 1),
        id="5-supervisor-escalations-of-a-state-on-a-day",
    ),
    pytest.param(
        # Not a README pattern: one log by its table key.
        '{ deviceLog(deviceId: "12345", state: "NORMAL", date: "2020-04-24T14:55:00") { state detail device'
        " { deviceId } } }",
        {
            "deviceLog": {
                "state": "NORMAL",
                "detail": {"Detail1": "Back to normal after a restart.", "Detail2": "Fan speed 1200 rpm."},
                "device": {"deviceId": "12345"},
            }
        },
        (1, 1),
        id="a-log-by-its-key",
    ),
    pytest.param(
        # A log in neither index (no operator yet) is still a log, and is in no operator's list.
        '{ logsOfDevice(deviceId: "99999") { nodes { state operator escalatedTo } } }',
        {"logsOfDevice": {"nodes": [{"state": "WARNING2", "operator": None, "escalatedTo": None}]}},
        (1, 1),
        id="a-log-in-no-index",
    ),
]


@pytest.mark.parametrize(("query", "expected", "cost"), READS)
def test_each_access_pattern_answers_as_the_fixture_says_in_the_fewest_requests(
    logs: tuple[Gateway, str], query: str, expected: Any, cost: tuple[int, int]
) -> None:
    gateway, _ = logs
    assert_pattern(gateway, query, expected, cost)


def test_a_day_without_its_state_is_refused_before_any_request(logs: tuple[Gateway, str]) -> None:
    # The date follows the state in State#Date: without the state, the day is no one stretch of keys.
    gateway, _ = logs
    body = gateway.query(
        '{ supervisorEscalations(supervisor: "Sara", date: {beginsWith: "2020-04-27"}) { nodes { date } } }'
    )
    assert body["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    assert body["errors"][0]["message"] == "date is read within state: give state as well"
    assert body["extensions"]["dynamodb"]["calls"] == 0


def test_a_day_of_a_state_pages_both_ways_within_the_range(logs: tuple[Gateway, str]) -> None:
    # A range after a level: each page one Query under "WARNING4#2020-04-27", resumed from its cursor.
    gateway, _ = logs
    on_the_day = [i["Date"] for i in _gsi("EscalatedTo", SORT, "Sara", lambda s: s.startswith("WARNING4#2020-04-27"))]
    assert len(on_the_day) == 2
    field = 'supervisorEscalations(supervisor: "Sara", state: "WARNING4", date: {beginsWith: "2020-04-27"}'
    seen: list[str] = []
    after = None
    while True:
        page = field + ", first: 1" + ("" if after is None else ", after: " + json.dumps(after)) + ")"
        data, spent = answered(gateway, "{ " + page + " { nodes { date } pageInfo { hasNextPage endCursor } } }")
        connection = data["supervisorEscalations"]
        seen += [one["date"] for one in connection["nodes"]]
        assert spent == (1, 1)
        if not connection["pageInfo"]["hasNextPage"]:
            break
        after = connection["pageInfo"]["endCursor"]
    assert seen == on_the_day
    data, _ = answered(gateway, "{ " + field + ", last: 1) { nodes { date } } }")
    assert data["supervisorEscalations"]["nodes"] == [{"date": on_the_day[-1]}]


def test_every_log_is_found_again_by_its_global_id(logs: tuple[Gateway, str]) -> None:
    gateway, _ = logs
    data, _ = answered(gateway, '{ logsOfDevice(deviceId: "11223") { nodes { id state date } } }')
    found = data["logsOfDevice"]["nodes"]
    ids = [one["id"] for one in found]
    again, cost = answered(gateway, "{ nodes(ids: " + json.dumps(ids) + ") { id ... on DeviceLog { state date } } }")
    assert again["nodes"] == found
    assert cost == (1, 1)


def test_an_id_holding_the_separator_is_refused_before_any_request(logs: tuple[Gateway, str]) -> None:
    # "WARNING1#2020" as a state would read another state's logs: refused, not answered.
    gateway, _ = logs
    body = gateway.query('{ logsOfDevice(deviceId: "12345", state: "WARNING1#2020") { nodes { date } } }')
    assert body["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    assert body["extensions"]["dynamodb"]["calls"] == 0


def test_regression_a_log_never_escalated_is_still_a_log(logs: tuple[Gateway, str]) -> None:
    # GSI2's sort key is the table's own State#Date, so every log holds half of GSI2's keys: a log without
    # EscalatedTo is in no GSI2 partition (DynamoDB leaves it out), not an item of unknown shape. It was skipped,
    # so every pattern but 3 and 4 answered nothing without an error.
    gateway, _ = logs
    query = '{ deviceLog(deviceId: "12345", state: "WARNING1", date: "2020-04-24T14:40:00") { operator escalatedTo } }'
    data, spent = answered(gateway, query)
    assert data == {"deviceLog": {"operator": "Liz", "escalatedTo": None}}
    assert spent == (1, 1)


def test_a_partition_whose_keys_look_like_a_logs_is_no_rival_to_it() -> None:
    # A partition entity has no item, so no item is ever taken for one: its made-up sort key may look like a log's.
    device = Entity("Device", {None: KeyShape.of("d#{deviceId}", "d#{deviceId}")}, partition=True)
    model = Model("t", LOG_MODEL.indexes, (device, DEVICE_LOG))
    item = {"DeviceID": "d#779", SORT: "d#779", "State": "d", "Date": "779"}
    found = model.recognise(item)
    assert found is None or found[0] is DEVICE_LOG


# --- writes: the design's own rules --------------------------------------------------------------------------------


def _stored(dynamodb: Any, table: str, device: str, sort: str) -> dict[str, Any]:
    key = {"DeviceID": {"S": device}, SORT: {"S": sort}}
    found: dict[str, Any] = dynamodb.get_item(TableName=table, Key=key, ConsistentRead=True)["Item"]
    return {name: next(iter(value.values())) for name, value in found.items()}


def _write(gateway: Gateway, field: str, data: dict[str, Any]) -> Any:
    result, _ = mutate(gateway, field, data, "... on DeviceLog { version }")
    assert result["__typename"] == "DeviceLog", result
    return result


def test_a_created_log_is_in_the_indexes_its_input_keys(served: Callable[..., Gateway], dynamodb: Any) -> None:
    gateway = served(DEVICE_LOGS)
    table = gateway.table
    base = {"deviceId": "777", "state": "WARNING4"}
    _write(gateway, "createDeviceLog", base | {"date": "2020-04-27T16:10:00", "operator": "Sue"})
    _write(gateway, "createDeviceLog", base | {"date": "2020-04-27T16:15:00", "operator": "Sue", "escalatedTo": "Sara"})
    _write(gateway, "createDeviceLog", base | {"date": "2020-04-27T16:20:00"})
    stored = _stored(dynamodb, table, "d#777", "WARNING4#2020-04-27T16:15:00")
    design = ("DeviceID", SORT, "State", "Operator", "Date", "EscalatedTo")
    assert {name: stored.get(name) for name in design} == {
        "DeviceID": "d#777",
        SORT: "WARNING4#2020-04-27T16:15:00",
        "State": "WARNING4",  # the id, copied as the design stores it (from_id)
        "Operator": "Sue",
        "Date": "2020-04-27T16:15:00",
        "EscalatedTo": "Sara",
    }
    data, _ = answered(
        gateway,
        '{ operatorLogs(operator: "Sue") { nodes { date } } supervisorEscalations(supervisor: "Sara",'
        ' state: "WARNING4") { nodes { date } } logsOfDevice(deviceId: "777") { nodes { date operator } } }',
    )
    assert data == {
        "operatorLogs": {"nodes": [{"date": "2020-04-27T16:10:00"}, {"date": "2020-04-27T16:15:00"}]},
        "supervisorEscalations": {"nodes": [{"date": "2020-04-27T16:15:00"}]},
        "logsOfDevice": {
            "nodes": [
                {"date": "2020-04-27T16:20:00", "operator": None},
                {"date": "2020-04-27T16:15:00", "operator": "Sue"},
                {"date": "2020-04-27T16:10:00", "operator": "Sue"},
            ]
        },
    }


def test_a_log_created_without_an_operator_holds_its_date_and_is_in_no_index(
    served: Callable[..., Gateway], dynamodb: Any
) -> None:
    # Date is GSI1's sort key and, declared from_id, the copy every item of the design holds: a log with no operator
    # holds it without Operator, which leaves it out of GSI1 and still a log.
    gateway = served(DEVICE_LOGS)
    _write(gateway, "createDeviceLog", {"deviceId": "778", "state": "WARNING2", "date": "2020-04-29T10:00:00"})
    stored = _stored(dynamodb, gateway.table, "d#778", "WARNING2#2020-04-29T10:00:00")
    assert (stored["State"], stored["Date"], "Operator" in stored) == ("WARNING2", "2020-04-29T10:00:00", False)
    data, spent = answered(gateway, '{ logsOfDevice(deviceId: "778") { nodes { state date operator } } }')
    assert data == {"logsOfDevice": {"nodes": [{"state": "WARNING2", "date": "2020-04-29T10:00:00", "operator": None}]}}
    assert spent == (1, 1)


def test_escalating_a_log_moves_it_into_the_supervisors_index(served: Callable[..., Gateway]) -> None:
    # EscalatedTo is an id only GSI2's sparse keys hold: an update sets it, and the log enters the supervisor's list.
    gateway = served(DEVICE_LOGS)
    log = {"deviceId": "779", "state": "WARNING4", "date": "2020-04-27T16:10:00"}
    created = _write(gateway, "createDeviceLog", log | {"operator": "Sue"})
    _write(gateway, "updateDeviceLog", log | {"escalatedTo": "Sara", "expectedVersion": created["version"]})
    data, _ = answered(gateway, '{ supervisorEscalations(supervisor: "Sara") { nodes { deviceId } } }')
    assert data == {"supervisorEscalations": {"nodes": [{"deviceId": "779"}]}}
    # Taken back: out of GSI2 without its EscalatedTo; the State#Date it shares with the table stays.
    _write(gateway, "updateDeviceLog", log | {"escalatedTo": None, "expectedVersion": created["version"] + 1})
    data, _ = answered(gateway, '{ supervisorEscalations(supervisor: "Sara") { nodes { deviceId } } }')
    assert data == {"supervisorEscalations": {"nodes": []}}
    data, _ = answered(gateway, '{ logsOfDevice(deviceId: "779") { nodes { state date operator escalatedTo } } }')
    assert data["logsOfDevice"]["nodes"] == [
        {"state": "WARNING4", "date": "2020-04-27T16:10:00", "operator": "Sue", "escalatedTo": None}
    ]
