"""AWS's device state log design, declared the way a team with this table would, from the docs alone.

It is the ``examples/device-state-log`` design of ``aws-samples/amazon-dynamodb-design-patterns`` in its final
step (its NoSQL Workbench model ``DeviceStateLog_7.json``), written here with our own data in its stored spelling:
one kind of item, a log line of a device's state, whose key attribute names are the stored ones (``DeviceID``, a
sort key named ``State#Date``), with no prefix on the operator's and the supervisor's names in the indexes.

    DeviceLog   DeviceID=d#<deviceId>  State#Date=<state>#<date>       (Date: 2020-04-24T14:40:00)
                GSI1: Operator=<operator>  Date=<date>                 (every log an operator was assigned)
                GSI2: EscalatedTo=<supervisor>  State#Date=<state>#<date>   (sparse: only escalated logs)

Every item also carries ``State`` and ``Date`` as attributes of their own (the design's first step filtered on
``State``); ``Detail`` is an optional map of texts. A device, an operator and a supervisor have no item: each is
only the partition that holds their logs, in the table, GSI1 and GSI2.
"""

from __future__ import annotations

from typing import Any

from gateway import Attribute, Collection, Declaration, Entity, Index, KeyShape, Link, Model

LOG_TABLE = Index(None, "DeviceID", "State#Date")
LOG_GSI1 = Index("GSI1", "Operator", "Date")
LOG_GSI2 = Index("GSI2", "EscalatedTo", "State#Date")

DEVICE = Entity(
    "Device",
    {None: KeyShape.of("d#{deviceId}", "DEVICE")},
    description="A monitored device: the partition of its logs, with no item of its own.",
    partition=True,
)
DEVICE_LOG = Entity(
    "DeviceLog",
    {
        None: KeyShape.of("d#{deviceId}", "{state}#{date}"),
        "GSI1": KeyShape.of("{operator}", "{date}", sparse=True),
        "GSI2": KeyShape.of("{escalatedTo}", "{state}#{date}", sparse=True),
    },
    {
        "State": Attribute("S", "The state, as the sort key holds it.", from_id="state"),
        "Date": Attribute("S", "When, as the sort key holds it (GSI1's sort key too).", from_id="date"),
        "Detail": Attribute("JSON", "What the device reported, free-form."),
    },
    description="One message of a device's state, sent every five minutes until the device is back to normal.",
)
OPERATOR = Entity(
    "Operator",
    {None: KeyShape.of("{operator}", "OPERATOR")},
    description="An operator: the GSI1 partition of the logs assigned to them.",
    partition=True,
)
SUPERVISOR = Entity(
    "Supervisor",
    {None: KeyShape.of("{supervisor}", "SUPERVISOR")},
    description="A supervisor: the GSI2 partition of the logs escalated to them.",
    partition=True,
)

LOG_MODEL = Model(
    table="DeviceStateLog",
    indexes=(LOG_TABLE, LOG_GSI1, LOG_GSI2),
    entities=(DEVICE, DEVICE_LOG, OPERATOR, SUPERVISOR),
    collections=(
        Collection(
            "Device.logs",
            DEVICE,
            DEVICE_LOG,
            ascending=False,
            levels=("state",),
            root="logsOfDevice",
            description="A device's logs by state, the most recent first within a state.",
        ),
        Collection(
            "Operator.logs",
            OPERATOR,
            DEVICE_LOG,
            "GSI1",
            range="date",
            root="operatorLogs",
            description="The logs assigned to an operator, by date.",
        ),
        Collection(
            "Supervisor.escalations",
            SUPERVISOR,
            DEVICE_LOG,
            "GSI2",
            levels=("state",),
            range="date",
            partition={"escalatedTo": "supervisor"},
            root="supervisorEscalations",
            description="The logs escalated to a supervisor, by state and date.",
        ),
    ),
    links=(Link("DeviceLog.device", DEVICE_LOG, DEVICE),),
)
DEVICE_LOGS = Declaration(LOG_MODEL)


def items() -> list[dict[str, Any]]:
    """The fixture, spelled as the table stores it: literal key strings, never the gateway's key code."""
    out: list[dict[str, Any]] = []
    logs = (
        # device, state, date, operator, escalated to
        ("d#12345", "WARNING1", "2020-04-24T14:40:00", "Liz", None),
        ("d#12345", "WARNING1", "2020-04-24T14:45:00", "Liz", None),
        ("d#12345", "WARNING1", "2020-04-24T14:50:00", "Liz", None),
        ("d#12345", "NORMAL", "2020-04-24T14:55:00", "Liz", None),
        ("d#12345", "WARNING1", "2020-04-25T00:00:00", "Liz", None),  # after the README's upper bound 2020-04-25
        ("d#12345", "WARNING10", "2020-04-26T08:00:00", "Liz", "Sara"),  # begins with WARNING1, is not WARNING1
        ("d#54321", "WARNING2", "2020-04-11T09:25:00", "Sue", None),
        ("d#54321", "NORMAL", "2020-04-11T09:30:00", "Sue", None),
        ("d#54321", "WARNING3", "2020-04-11T05:50:00", "Sue", None),
        ("d#54321", "WARNING3", "2020-04-11T05:55:00", "Liz", "Sara"),
        ("d#54321", "NORMAL", "2020-04-11T06:00:00", "Liz", None),
        ("d#54321", "WARNING1", "2020-04-20T00:00:00", "Liz", None),  # on the README's lower bound
        ("d#11223", "WARNING4", "2020-04-27T16:10:00", "Sue", None),
        ("d#11223", "WARNING4", "2020-04-27T16:15:00", "Sue", "Sara"),
        ("d#11223", "WARNING4", "2020-04-27T16:20:00", "Sue", "Sara"),
        ("d#11223", "WARNING4", "2020-04-28T09:00:00", "Sue", "Sara"),
        ("d#11223", "WARNING5", "2020-04-27T17:00:00", "Sue", "Sara"),  # on the day, another state
        ("d#99999", "WARNING2", "2020-04-29T10:00:00", None, None),  # not assigned yet: in no index
    )
    for device, state, date, operator, escalated in logs:
        item: dict[str, Any] = {"DeviceID": device, "State#Date": f"{state}#{date}", "Date": date, "State": state}
        if operator is not None:
            item["Operator"] = operator
        if escalated is not None:
            item["EscalatedTo"] = escalated
        out.append(item)
    out[3]["Detail"] = {"Detail1": "Back to normal after a restart.", "Detail2": "Fan speed 1200 rpm."}
    return out
