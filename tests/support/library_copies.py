"""Copies of a document, counted on the original through an index: a copy's item is its own partition, and its
GSI1 keys name the original (or, as a draft, the document it drafts), so the original's counters follow members
that live in other partitions of the table.

    Doc    PK=DOC#<docId>   SK=DOC                                           title, copyCount, draftCount
    Copy   PK=COPY#<copyId> SK=COPY  GSI1PK=DOC#<originalId> GSI1SK=COPY#<copyId>    note
                                     or GSI1PK=DOC#<draftOf>   GSI1SK=DRAFT#<copyId>  (a draft: the variant shape)
"""

from __future__ import annotations

from gateway.design.declaration import Declaration
from gateway.design.model import Attribute, Collection, Entity, Index, KeyShape, Model

COPIES = KeyShape.of("DOC#{originalId}", "COPY#{copyId}")
DRAFTS = KeyShape.of("DOC#{draftOf}", "DRAFT#{copyId}")

DOC = Entity(
    "Doc",
    {None: KeyShape.of("DOC#{docId}", "DOC")},
    {
        "title": Attribute("S", required=True),
        "copyCount": Attribute("INT", writable=False),
        "draftCount": Attribute("INT", writable=False),
    },
)
COPY = Entity(
    "Copy",
    {None: KeyShape.of("COPY#{copyId}", "COPY"), "GSI1": COPIES},
    {"note": "S"},
    variants={"GSI1": (DRAFTS,)},
)

COPIES_DESK = Declaration(
    Model(
        "copies",
        (Index(None, "PK", "SK"), Index("GSI1", "GSI1PK", "GSI1SK")),
        (DOC, COPY),
        collections=(
            Collection("Doc.copies", DOC, COPY, "GSI1", partition={"originalId": "docId"}, counter="copyCount"),
            Collection(
                "Doc.drafts", DOC, COPY, "GSI1", shape=DRAFTS, partition={"draftOf": "docId"}, counter="draftCount"
            ),
        ),
    )
)
