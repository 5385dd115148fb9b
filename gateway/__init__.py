"""tablegraph: a GraphQL gateway over a DynamoDB single-table design. What a design is declared with."""

from gateway.design.declaration import Declaration
from gateway.design.model import (
    Attribute,
    Collection,
    Copy,
    Entity,
    Index,
    Item,
    KeyShape,
    Link,
    Lookup,
    Model,
    Numbering,
    Root,
    Shape,
)
from gateway.design.tenancy import Tenancy

__all__ = [
    "Attribute",
    "Collection",
    "Copy",
    "Declaration",
    "Entity",
    "Index",
    "Item",
    "KeyShape",
    "Link",
    "Lookup",
    "Model",
    "Numbering",
    "Root",
    "Shape",
    "Tenancy",
]
