"""A declaration written as a YAML (or JSON) file: read, checked with the file's line and key, built into the model.

The format is ``declaration.schema.json`` beside this module; docs/declarations.md describes it. Python
declarations stay for what only code can say (hand-written fields, demo data) and can start from a file's with
``load_file(path).model``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, get_args

import yaml

from gateway.design.declaration import Declaration, load
from gateway.design.model import (
    KEY_TYPES,
    Attribute,
    AttributeType,
    Collection,
    Copy,
    Entity,
    Index,
    KeyShape,
    KeyType,
    Link,
    Lookup,
    MintKind,
    Model,
    Numbering,
    Shape,
)
from gateway.design.rules import Caller, Condition, Now, Rule, Transition, WriteRule
from gateway.design.tenancy import Tenancy
from gateway.surface.graph import build

SUFFIXES = (".yaml", ".yml", ".json")
SCHEMA_PATH = Path(__file__).with_name("declaration.schema.json")
TABLE_KEYS = "table"
"""The name that stands for the table's own key among an entity's ``keys`` (None in the Python API)."""

KeyPath = tuple[str | int, ...]

_TOP = {
    "table",
    "keys",
    "indexes",
    "expires",
    "shapes",
    "entities",
    "collections",
    "links",
    "lookups",
    "copies",
    "tenancy",
    "rules",
    "transitions",
}
_ENTITY = {
    "description",
    "keys",
    "variants",
    "attributes",
    "discriminator",
    "constants",
    "mint",
    "minted",
    "verbs",
    "internal",
    "partition",
}
_SHAPE_KEYS = {"pk", "sk", "sparse", "separator"}
_ATTRIBUTE = {
    "type",
    "description",
    "required",
    "default",
    "writable",
    "from_id",
    "on_create",
    "on_update",
    "clock",
    "minimum",
    "maximum",
    "max_length",
    "enum",
    "enum_names",
    "field",
    "shape",
    "element",
    "max_items",
    "text",
}
_COLLECTION = {
    "parent",
    "member",
    "index",
    "ascending",
    "target",
    "counter",
    "description",
    "levels",
    "filters",
    "shape",
    "partition",
    "ids",
    "range",
    "root",
    "union",
    "consistent",
}
_LINK = {"source", "target", "description", "ids"}
_LOOKUP = {"entity", "index", "description"}
_COPY = {"collection", "attribute", "source"}
_CONDITION = {"attribute", "is", "value", "caller"}
_RULE = {"entity", "guards", "when"}
_TRANSITION = {"entity", "description", "when", "set", "remove"}


class DeclarationFileError(ValueError):
    """A declaration file that cannot be read or built: the message starts with ``file:line: key:``."""

    code = "BAD_DECLARATION"


def load_model(spec: str) -> Declaration:
    """The declaration ``--model`` names: a YAML or JSON file by its path, or a Python one as ``pkg.module:attr``."""
    if spec.lower().endswith(SUFFIXES):
        return load_file(Path(spec))
    return load(spec)


def load_file(path: Path) -> Declaration:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise DeclarationFileError(f"{path}: cannot read the declaration: {error.strerror}") from None
    return parse(text, str(path))


def parse(text: str, name: str = "<declaration>") -> Declaration:
    """The declaration in ``text``; ``name`` is the file errors name."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error)
        raise DeclarationFileError(f"{name}{line}: not YAML: {problem}") from None
    if node is None:
        raise DeclarationFileError(f"{name}:1: the file is empty")
    lines: dict[KeyPath, int] = {}
    _index_lines(node, (), lines)
    data = yaml.SafeLoader("").construct_document(node)
    builder = _Builder(name, lines)
    declaration = builder.declaration(data)
    # Names the model accepts can still clash as GraphQL types: found here, at the file's line, not at serve.
    builder.built(builder.named, lambda: build(declaration))
    return declaration


def _index_lines(node: yaml.Node, path: KeyPath, out: dict[KeyPath, int]) -> None:
    """The line of every key and element, by its path from the document's root."""
    out.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            out[(*path, str(key.value))] = key.start_mark.line + 1
            _index_lines(value, (*path, str(key.value)), out)
    elif isinstance(node, yaml.SequenceNode):
        for i, value in enumerate(node.value):
            _index_lines(value, (*path, i), out)


class _Builder:
    """Builds the declaration types from the file's data, naming the line and key of whatever is wrong."""

    def __init__(self, name: str, lines: Mapping[KeyPath, int]) -> None:
        self.name = name
        self.lines = lines
        self.shapes: dict[str, Shape] = {}
        self.entities: dict[str, Entity] = {}
        self.collections: dict[str, Collection] = {}
        self.indexes: dict[str | None, Index] = {}

    def fail(self, path: KeyPath, message: str) -> DeclarationFileError:
        line = next((self.lines[path[:n]] for n in range(len(path), -1, -1) if path[:n] in self.lines), 1)
        key = ".".join(str(part) for part in path) or "(top)"
        return DeclarationFileError(f"{self.name}:{line}: {key}: {message}")

    def mapping(self, value: Any, path: KeyPath, allowed: set[str] | None = None) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(path, f"expected a mapping, found {_kind(value)}")
        for key in value:
            if not isinstance(key, str):
                raise self.fail(path, f"keys are text, found {key!r}")
            if allowed is not None and key not in allowed:
                raise self.fail((*path, key), f"unknown key; expected one of {', '.join(sorted(allowed))}")
        return value

    def text(self, value: Any, path: KeyPath) -> str:
        if not isinstance(value, str) or not value:
            raise self.fail(path, f"expected text, found {_kind(value)}")
        return value

    def flag(self, value: Any, path: KeyPath) -> bool:
        if not isinstance(value, bool):
            raise self.fail(path, f"expected true or false, found {_kind(value)}")
        return value

    def texts(self, value: Any, path: KeyPath) -> tuple[str, ...]:
        if not isinstance(value, list):
            raise self.fail(path, f"expected a list, found {_kind(value)}")
        return tuple(self.text(one, (*path, i)) for i, one in enumerate(value))

    def names(self, value: Any, path: KeyPath) -> dict[str, str]:
        return {key: self.text(one, (*path, key)) for key, one in self.mapping(value, path).items()}

    def built(self, path: KeyPath | Callable[[str], KeyPath], make: Callable[[], Any]) -> Any:
        """What ``make`` builds; the model's own refusal (a ValueError) is named with this path's line, or with
        the line of what the refusal names when ``path`` finds it from the message."""
        try:
            return make()
        except DeclarationFileError:
            raise
        except (ValueError, TypeError) as error:
            raise self.fail(path(str(error)) if callable(path) else path, str(error)) from None

    def named(self, message: str) -> KeyPath:
        """The relation or entity a model's refusal starts with (``Customer.orders: ...``)."""
        subject = message.partition(":")[0]
        if subject.startswith("lookup '") and subject.endswith("'"):
            return ("lookups", subject[len("lookup '") : -1])
        for part in ("collections", "links", "entities"):
            if (part, subject) in self.lines:
                return (part, subject)
        return ()

    def find(self, table: Mapping[str, Any], value: Any, path: KeyPath, what: str) -> Any:
        name = self.text(value, path)
        if name not in table:
            raise self.fail(path, f"no {what} named {name!r} is declared")
        return table[name]

    # --- the parts ------------------------------------------------------------------------------------------

    def declaration(self, data: Any) -> Declaration:
        top = self.mapping(data, (), _TOP)
        for required in ("table", "keys", "entities"):
            if required not in top:
                raise self.fail((), f"{required!r} is required")
        indexes = [self.index(None, top["keys"], ("keys",))]
        for name, spec in self.mapping(top.get("indexes", {}), ("indexes",)).items():
            indexes.append(self.index(name, spec, ("indexes", name)))
        for name, spec in self.mapping(top.get("shapes", {}), ("shapes",)).items():
            self.shapes[name] = self.shape(name, spec, ("shapes", name))
        self.indexes = {index.name: index for index in indexes}
        for name, spec in self.mapping(top["entities"], ("entities",)).items():
            self.entities[name] = self.entity(name, spec, ("entities", name))
        for name, spec in self.mapping(top.get("collections", {}), ("collections",)).items():
            self.collections[name] = self.collection(name, spec, ("collections", name))
        links = tuple(
            self.link(name, spec, ("links", name))
            for name, spec in self.mapping(top.get("links", {}), ("links",)).items()
        )
        lookups = tuple(
            self.lookup(name, spec, ("lookups", name))
            for name, spec in self.mapping(top.get("lookups", {}), ("lookups",)).items()
        )
        copies = self.copies(top.get("copies", []), ("copies",))
        expires = self.text(top["expires"], ("expires",)) if "expires" in top else None
        model = self.built(
            self.named,
            lambda: Model(
                table=self.text(top["table"], ("table",)),
                indexes=tuple(indexes),
                entities=tuple(self.entities.values()),
                collections=tuple(self.collections.values()),
                links=links,
                copies=copies,
                expires_attribute=expires,
                lookups=lookups,
            ),
        )
        tenancy = Tenancy(self.names(top.get("tenancy", {}), ("tenancy",)))
        rules: list[WriteRule] = [
            self.rule(name, spec, ("rules", name))
            for name, spec in self.mapping(top.get("rules", {}), ("rules",)).items()
        ]
        rules += [
            self.transition(name, spec, ("transitions", name))
            for name, spec in self.mapping(top.get("transitions", {}), ("transitions",)).items()
        ]
        return self.built(  # type: ignore[no-any-return]
            self.rule_named, lambda: Declaration(model, tenancy, rules=tuple(rules))
        )

    def rule_named(self, message: str) -> KeyPath:
        """The rule or transition a refusal names (``rule 'startGame': ...``), else the tenancy."""
        subject = message.partition(":")[0]
        name = subject[len("rule '") : -1] if subject.startswith("rule '") and subject.endswith("'") else ""
        return next((path for path in (("rules", name), ("transitions", name)) if path in self.lines), ("tenancy",))

    def index(self, name: str | None, spec: Any, path: KeyPath) -> Index:
        types = {"pk_type", "sk_type"}
        keys = self.mapping(
            spec, path, {"pk", "sk", *types} if name is None else {"pk", "sk", "local", "projection", *types}
        )
        if "pk" not in keys:
            raise self.fail(path, "an index names its partition key attribute (pk), and its sort key attribute (sk)")
        for key in ("pk", "sk"):
            if isinstance(keys.get(key), list):
                raise self.fail(
                    (*path, key),
                    "a key of several attributes is not supported yet: name one attribute (pk: <attribute>), or keep"
                    " a composite key in one attribute ('{a}#{b}')",
                )
        sk = self.text(keys["sk"], (*path, "sk")) if "sk" in keys else None
        local = self.flag(keys.get("local", False), (*path, "local"))
        if local and "sk" not in keys:
            raise self.fail(path, "a local index sorts the table's partitions by an attribute of its own: give sk")
        projection = keys.get("projection", "ALL")
        if isinstance(projection, list):
            projection = self.texts(projection, (*path, "projection"))
        elif projection not in ("ALL", "KEYS_ONLY"):
            raise self.fail((*path, "projection"), "expected ALL, KEYS_ONLY or a list of the attributes it includes")
        pk_type, sk_type = (self.key_type(keys.get(part, "S"), (*path, part)) for part in ("pk_type", "sk_type"))
        pk = self.text(keys["pk"], (*path, "pk"))
        return Index(name, pk, sk, local, projection, pk_type=pk_type, sk_type=sk_type)

    def key_type(self, value: Any, path: KeyPath) -> KeyType:
        for kind in KEY_TYPES:
            if value == kind:
                return kind
        raise self.fail(path, f"a key attribute's type is S (text), N (a number) or B (binary), not {value!r}")

    def key_shape(self, spec: Any, path: KeyPath, index: Index) -> KeyShape:
        keys = self.mapping(spec, path, _SHAPE_KEYS)
        if "pk" not in keys:
            raise self.fail(path, "'pk' is required: the key template of that attribute")
        where = "the table" if index.name is None else f"index {index.name}"
        if index.sk is None and "sk" in keys:
            raise self.fail(
                (*path, "sk"),
                f"{where} has a partition key alone ({index.pk}): drop sk, or give the index its sort key attribute"
                " (sk: <attribute>)",
            )
        if index.sk is not None and "sk" not in keys:
            raise self.fail(path, f"'sk' is required: {where} sorts by {index.sk}, so give its template (sk: ...)")
        sparse = self.flag(keys.get("sparse", False), (*path, "sparse"))
        separator = self.text(keys.get("separator", "#"), (*path, "separator"))
        pk = self.text(keys["pk"], (*path, "pk"))
        sk = self.text(keys["sk"], (*path, "sk")) if "sk" in keys else None
        return self.built(path, lambda: KeyShape.of(pk, sk, sparse, separator))  # type: ignore[no-any-return]

    def entity(self, name: str, spec: Any, path: KeyPath) -> Entity:
        data = self.mapping(spec, path, _ENTITY)
        if "keys" not in data:
            raise self.fail(path, "'keys' is required: the entity's key templates per index")
        keys: dict[str | None, KeyShape] = {}
        for index, shape in self.mapping(data["keys"], (*path, "keys")).items():
            where = (*path, "keys", index)
            key = None if index == TABLE_KEYS else index
            if key not in self.indexes:
                raise self.fail(where, f"no index named {index!r}; declared: {_listed(list(self.indexes))}")
            keys[key] = self.key_shape(shape, where, self.indexes[key])
        if None not in keys:
            raise self.fail((*path, "keys"), f"an entity has a table key: give keys.{TABLE_KEYS}")
        variants: dict[str, tuple[KeyShape, ...]] = {}
        for index, shapes in self.mapping(data.get("variants", {}), (*path, "variants")).items():
            where = (*path, "variants", index)
            if not isinstance(shapes, list):
                raise self.fail(where, f"expected a list of key shapes, found {_kind(shapes)}")
            if index not in self.indexes:
                raise self.fail(where, f"no index named {index!r}; declared: {_listed(list(self.indexes))}")
            variants[index] = tuple(
                self.key_shape(one, (*where, i), self.indexes[index]) for i, one in enumerate(shapes)
            )
        attributes = {
            attribute: self.attribute(one, (*path, "attributes", attribute))
            for attribute, one in self.mapping(data.get("attributes", {}), (*path, "attributes")).items()
        }
        discriminator = None
        if "discriminator" in data:
            where = (*path, "discriminator")
            told = self.mapping(data["discriminator"], where, {"attribute", "value"})
            if set(told) != {"attribute", "value"}:
                raise self.fail(where, "a discriminator names its attribute and the value every item holds")
            discriminator = (self.text(told["attribute"], (*where, "attribute")), str(told["value"]))
        mint = self.text(data["mint"], (*path, "mint")) if "mint" in data else None
        minted = self.minted(data.get("minted", "time"), (*path, "minted"))
        return self.built(  # type: ignore[no-any-return]
            path,
            lambda: Entity(
                name,
                keys,
                attributes,
                description=_optional_text(data, "description"),
                mint=mint,
                minted=minted,
                verbs=self.names(data.get("verbs", {}), (*path, "verbs")),
                internal=self.flag(data.get("internal", False), (*path, "internal")),
                discriminator=discriminator,
                variants=variants,
                constants={
                    attribute: str(value)
                    for attribute, value in self.mapping(data.get("constants", {}), (*path, "constants")).items()
                },
                partition=self.flag(data.get("partition", False), (*path, "partition")),
            ),
        )

    def minted(self, spec: Any, path: KeyPath) -> MintKind | Numbering:
        """``time``, ``ulid``, or ``{parent: Project, counter: lastNumber, ids: {...}}`` for numbers from a
        counter."""
        if spec in ("time", "ulid"):
            return spec  # type: ignore[no-any-return]
        if not isinstance(spec, dict):
            raise self.fail(path, "an id is minted as time, ulid or {parent: <entity>, counter: <attribute>}")
        data = self.mapping(spec, path, {"parent", "counter", "ids"})
        if not {"parent", "counter"} <= set(data):
            raise self.fail(path, "numbers are counted by an attribute of a parent: give both parent and counter")
        return Numbering(
            self.text(data["parent"], (*path, "parent")),
            self.text(data["counter"], (*path, "counter")),
            self.names(data.get("ids", {}), (*path, "ids")),
        )

    def attribute(self, spec: Any, path: KeyPath) -> Attribute:
        if isinstance(spec, str):
            spec = {"type": spec}
        data = self.mapping(spec, path, _ATTRIBUTE)
        if "type" not in data:
            raise self.fail(path, "'type' is required")
        if data["type"] not in get_args(AttributeType):
            raise self.fail((*path, "type"), f"no type {data['type']!r}; one of {', '.join(get_args(AttributeType))}")
        options = dict(data)
        if "shape" in options:
            options["shape"] = self.find(self.shapes, options["shape"], (*path, "shape"), "shape")
        if isinstance(options.get("enum"), list):
            options["enum"] = tuple(options["enum"])
        return self.built(path, lambda: Attribute(**options))  # type: ignore[no-any-return]

    def shape(self, name: str, spec: Any, path: KeyPath) -> Shape:
        data = self.mapping(spec, path, {"description", "fields"})
        fields = {
            field: self.attribute(one, (*path, "fields", field))
            for field, one in self.mapping(data.get("fields", {}), (*path, "fields")).items()
        }
        return self.built(  # type: ignore[no-any-return]
            path, lambda: Shape(name, fields, description=_optional_text(data, "description"))
        )

    def collection(self, name: str, spec: Any, path: KeyPath) -> Collection:
        data = self.mapping(spec, path, _COLLECTION)
        for required in ("parent", "member"):
            if required not in data:
                raise self.fail(path, f"{required!r} is required")
        member = self.member(data["member"], (*path, "member"))
        target = self.find(self.entities, data["target"], (*path, "target"), "entity") if "target" in data else None
        shape = None
        if "shape" in data:
            index = data.get("index")
            if index not in self.indexes:
                raise self.fail((*path, "index"), f"no index named {index!r}; declared: {_listed(list(self.indexes))}")
            shape = self.key_shape(data["shape"], (*path, "shape"), self.indexes[index])
        return self.built(  # type: ignore[no-any-return]
            path,
            lambda: Collection(
                name,
                self.find(self.entities, data["parent"], (*path, "parent"), "entity"),
                member,
                index=_optional_text(data, "index"),
                ascending=self.flag(data.get("ascending", True), (*path, "ascending")),
                target=target,
                counter=_optional_text(data, "counter"),
                description=_optional_text(data, "description"),
                levels=self.texts(data.get("levels", []), (*path, "levels")),
                filters=self.texts(data.get("filters", []), (*path, "filters")),
                shape=shape,
                partition=self.names(data.get("partition", {}), (*path, "partition")),
                ids=self.names(data.get("ids", {}), (*path, "ids")),
                range=self.text(data["range"], (*path, "range")) if "range" in data else None,
                root=self.text(data["root"], (*path, "root")) if "root" in data else None,
                union=self.text(data["union"], (*path, "union")) if "union" in data else None,
                consistent=self.flag(data.get("consistent", False), (*path, "consistent")),
            ),
        )

    def member(self, value: Any, path: KeyPath) -> Entity | tuple[Entity, ...]:
        """A collection's member: an entity's name, or a list of them for a union connection."""
        if not isinstance(value, list):
            return self.find(self.entities, value, path, "entity")  # type: ignore[no-any-return]
        return tuple(self.find(self.entities, one, (*path, i), "entity") for i, one in enumerate(value))

    def link(self, name: str, spec: Any, path: KeyPath) -> Link:
        data = self.mapping(spec, path, _LINK)
        for required in ("source", "target"):
            if required not in data:
                raise self.fail(path, f"{required!r} is required")
        return self.built(  # type: ignore[no-any-return]
            path,
            lambda: Link(
                name,
                self.find(self.entities, data["source"], (*path, "source"), "entity"),
                self.find(self.entities, data["target"], (*path, "target"), "entity"),
                description=_optional_text(data, "description"),
                ids=self.names(data.get("ids", {}), (*path, "ids")),
            ),
        )

    def lookup(self, name: str, spec: Any, path: KeyPath) -> Lookup:
        data = self.mapping(spec, path, _LOOKUP)
        for required in ("entity", "index"):
            if required not in data:
                raise self.fail(path, f"{required!r} is required: a lookup reads one entity from one secondary index")
        entity = self.find(self.entities, data["entity"], (*path, "entity"), "entity")
        index = self.text(data["index"], (*path, "index"))
        return Lookup(name, entity, index, _optional_text(data, "description"))

    def conditions(self, value: Any, path: KeyPath) -> tuple[Condition, ...]:
        """``[{attribute: people, is: "=", value: 50}, {attribute: creator, is: "=", caller: sub}, ...]``"""
        if not isinstance(value, list):
            raise self.fail(path, f"expected a list of conditions, found {_kind(value)}")
        return tuple(self.condition(spec, (*path, i)) for i, spec in enumerate(value))

    def condition(self, spec: Any, path: KeyPath) -> Condition:
        data = self.mapping(spec, path, _CONDITION)
        if not {"attribute", "is"} <= set(data):
            raise self.fail(path, "a condition names its attribute and how it is tested (is: =, exists, ...)")
        if "value" in data and "caller" in data:
            raise self.fail(path, "a condition compares with a value or with the caller, not both")
        attribute = self.text(data["attribute"], (*path, "attribute"))
        compared = data.get("value")
        if "caller" in data:
            claim = self.text(data["caller"], (*path, "caller"))
            compared = self.built((*path, "caller"), lambda: Caller(claim))
        return self.built(path, lambda: Condition(attribute, data["is"], compared))  # type: ignore[no-any-return]

    def rule(self, name: str, spec: Any, path: KeyPath) -> Rule:
        data = self.mapping(spec, path, _RULE)
        for required in ("entity", "guards", "when"):
            if required not in data:
                raise self.fail(path, f"{required!r} is required: a rule guards an entity's update or delete")
        entity = self.find(self.entities, data["entity"], (*path, "entity"), "entity")
        guards = self.texts(data["guards"], (*path, "guards"))
        return Rule(name, entity, guards, self.conditions(data["when"], (*path, "when")))  # type: ignore[arg-type]

    def transition(self, name: str, spec: Any, path: KeyPath) -> Transition:
        data = self.mapping(spec, path, _TRANSITION)
        if "entity" not in data:
            raise self.fail(path, "'entity' is required: a transition changes one entity's item")
        entity = self.find(self.entities, data["entity"], (*path, "entity"), "entity")
        changes = {
            attribute: self.now(value, (*path, "set", attribute)) if isinstance(value, dict) else value
            for attribute, value in self.mapping(data.get("set", {}), (*path, "set")).items()
        }
        return Transition(
            name,
            entity,
            when=self.conditions(data.get("when", []), (*path, "when")),
            set=changes,
            remove=self.texts(data.get("remove", []), (*path, "remove")),
            description=_optional_text(data, "description"),
        )

    def now(self, value: Any, path: KeyPath) -> Now:
        """``{now: iso}``: the time of the write."""
        data = self.mapping(value, path, {"now"})
        return self.built(path, lambda: Now(data.get("now", "iso")))  # type: ignore[no-any-return]

    def copies(self, value: Any, path: KeyPath) -> tuple[Copy, ...]:
        if not isinstance(value, list):
            raise self.fail(path, f"expected a list, found {_kind(value)}")
        out = []
        for i, spec in enumerate(value):
            data = self.mapping(spec, (*path, i), _COPY)
            if set(data) != _COPY:
                raise self.fail((*path, i), "a copy names its collection, the member's attribute and the source")
            collection = self.find(self.collections, data["collection"], (*path, i, "collection"), "collection")
            out.append(
                Copy(collection, self.text(data["attribute"], (*path, i)), self.text(data["source"], (*path, i)))
            )
        return tuple(out)


def _optional_text(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return None if value is None else str(value)


def _listed(names: Sequence[str | None]) -> str:
    return ", ".join(TABLE_KEYS if name is None else name for name in names)


def _kind(value: object) -> str:
    if value is None:
        return "nothing"
    return {dict: "a mapping", list: "a list", str: "text", bool: "true/false"}.get(type(value), type(value).__name__)
