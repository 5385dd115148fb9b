"""A help desk whose design keeps its own write rules: ticket and request numbers from one counter on the project,
events with ULIDs, and sets of labels and watchers that updates add to and remove from.

    Project  PK=PROJ#<projectId>  SK=META                      lastNumber (the sequence), ticketCount
    Ticket   PK=PROJ#<projectId>  SK=TICKET#<ticketNumber:07>  title, labels SS, points NS (3 at most), number
    Request  PK=PROJ#<projectId>  SK=REQUEST#<requestNumber>   title
    Event    PK=PROJ#<projectId>  SK=EVENT#<eventId>           what; eventId a ULID
"""

from __future__ import annotations

from gateway.design.declaration import Declaration
from gateway.design.model import Attribute, Collection, Entity, Index, KeyShape, Model, Numbering

SEQUENCE = Numbering("Project", "lastNumber")

PROJECT = Entity(
    "Project",
    {None: KeyShape.of("PROJ#{projectId}", "META")},
    {
        "name": Attribute("S", required=True),
        "lastNumber": Attribute("INT", writable=False, description="The last ticket or request number taken."),
        "ticketCount": Attribute("INT", writable=False),
    },
)
TICKET = Entity(
    "Ticket",
    {None: KeyShape.of("PROJ#{projectId}", "TICKET#{ticketNumber:07}")},
    {
        "title": Attribute("S", required=True),
        "labels": "SS",
        "points": Attribute("NS", max_items=3),
        "number": Attribute("S", from_id="ticketNumber"),
    },
    mint="ticketNumber",
    minted=SEQUENCE,
)
REQUEST = Entity(
    "Request",
    {None: KeyShape.of("PROJ#{projectId}", "REQUEST#{requestNumber}")},
    {"title": Attribute("S", required=True)},
    mint="requestNumber",
    minted=SEQUENCE,
)
EVENT = Entity(
    "Event",
    {None: KeyShape.of("PROJ#{projectId}", "EVENT#{eventId}")},
    {"what": Attribute("S", required=True)},
    mint="eventId",
    minted="ulid",
)

HELPDESK = Declaration(
    Model(
        "helpdesk",
        (Index(None, "PK", "SK"),),
        (PROJECT, TICKET, REQUEST, EVENT),
        collections=(
            Collection("Project.tickets", PROJECT, TICKET, ascending=True, counter="ticketCount"),
            Collection("Project.requests", PROJECT, REQUEST, ascending=True),
            Collection("Project.events", PROJECT, EVENT, ascending=True),
        ),
    )
)
