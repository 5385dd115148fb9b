"""Hostile input: each request is answered with a coded error under 500, before DynamoDB, and leaks nothing.

Cases already in other files are not repeated here: malformed ids on every root field (test_input.py), too many
batch ids (test_input.py), bad JSON, wrong parameter types, content types and methods (test_http_contract.py), JSON
nested past the parser (test_http_contract.py), bad credentials (test_auth.py), other tenants' keys
(test_tenancy.py), and the limits one by one (test_limits.py).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from gateway.server.auth import digest
from tests.conftest import Gateway

GR = "application/graphql-response+json"
TENANT_KEY = "tg_hostile_tenant_0123456789"
ADMIN_KEY = "tg_hostile_admin_0123456789"
# Key attribute names, key prefixes and contract data no refused request may bring back.
LEAKS = ['"PK"', '"SK"', "GSI1", "WS#", "ORG#", "STU#", "CRS#", "TICKET#", "PROJ#", "USER#", "ENROLL#", "METADATA"]
LEAKS += ["Traceback", "botocore", "Big", "Org One", "User 1", "Student 1", "Course 1", "Project 1"]

LONE = "x\ud800y"
WORKSPACE = "query($v: ID!) { workspace(workspaceId: $v) { displayName } }"
PROJECTS = 'query($a: String) { workspace(workspaceId: "ws-main") { projects(after: $a) { nodes { title } } } }'
CREATE = "mutation($input: CreateProjectInput!) { createProject(input: $input) { __typename } }"


@dataclass(frozen=True)
class Hostile:
    """One hostile request: a JSON body (written with ASCII escapes, as clients write lone surrogates), raw bytes,
    or a GET query string; and what it is answered with."""

    code: str
    body: Any = None
    raw: bytes | None = None
    url: str | None = None
    headers: dict[str, str | bytes] = field(default_factory=dict)
    content_type: str = "application/json"
    tenant: bool = False
    """Sent to the gateway where the caller is one tenant (``ws-main``) and batches of two are allowed."""
    reads: frozenset[str] = frozenset()
    """DynamoDB operations the request's valid part may send: the parent of a field that is refused."""
    typed: bool = False
    """A mutation, which answers expected refusals with a typed error (``ValidationFailedError``)."""


def case(name: str, code: str, marks: Any = (), **request: Any) -> Any:
    return pytest.param(Hostile(code, **request), id=name, marks=marks)


def gid(*parts: str) -> str:
    """A global id as the gateway writes them, made by hand: base64url of ``Type#id...`` without padding."""
    return base64.urlsafe_b64encode("#".join(parts).encode()).rstrip(b"=").decode()


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def node(value: str) -> dict[str, Any]:
    return {"query": "query($id: ID!) { node(id: $id) { id } }", "variables": {"id": value}}


def projects_after(cursor: str, workspace: str = "ws-main") -> dict[str, Any]:
    query = PROJECTS.replace("ws-main", workspace)
    return {"query": query, "variables": {"a": cursor}}


def nested(depth: int) -> str:
    """A selection nested ``depth`` levels through project -> workspace -> projects -> nodes -> ..."""
    inner = "displayName"
    for _ in range(depth):
        inner = f"projects(first: 1) {{ nodes {{ workspace {{ {inner} }} }} }}"
    return f'{{ workspace(workspaceId: "ws-main") {{ {inner} }} }}'


def fragment_bomb(levels: int) -> str:
    spreads = "\n".join(
        f"fragment F{i} on Query {{ a{i}: __typename ...F{i - 1} ...F{i - 1} }}" for i in range(1, levels)
    )
    return f"fragment F0 on Query {{ __typename }}\n{spreads}\n{{ ...F{levels - 1} }}"


SURROGATES = [
    case("operationName", "BAD_USER_INPUT", body={"query": "query A { __typename }", "operationName": "\ud800"}),
    case("query comment", "BAD_USER_INPUT", body={"query": "{ __typename } # \ud800"}),
    case("inline literal", "BAD_USER_INPUT", body={"query": '{ workspace(workspaceId: "\udc00") { displayName } }'}),
    case(
        "inline block string", "BAD_USER_INPUT", body={"query": '{ workspace(workspaceId: """a\ud800""") { region } }'}
    ),
    case(
        "inline mutation literal",
        "BAD_USER_INPUT",
        body={"query": 'mutation { createProject(input: {workspaceId: "ws-main", title: "x\ud800"}) { __typename } }'},
    ),
    case("variable", "BAD_USER_INPUT", body={"query": WORKSPACE, "variables": {"v": LONE}}),
    case("low surrogate alone", "BAD_USER_INPUT", body={"query": WORKSPACE, "variables": {"v": "\udfff"}}),
    case("pair reversed", "BAD_USER_INPUT", body={"query": WORKSPACE, "variables": {"v": "\ude00\ud83d"}}),
    case("high surrogate at the end", "BAD_USER_INPUT", body={"query": WORKSPACE, "variables": {"v": "ws\ud83d"}}),
    case(
        "input object field",
        "BAD_USER_INPUT",
        body={"query": CREATE, "variables": {"input": {"workspaceId": "ws-main", "title": LONE}}},
    ),
    case(
        "list item",
        "BAD_USER_INPUT",
        body={"query": "query($i: [ID!]!) { students(studentIds: $i) { name } }", "variables": {"i": ["a", "\ud800"]}},
    ),
    case(
        "deep unused variable",
        "BAD_USER_INPUT",
        body={"query": "{ __typename }", "variables": {"v": [[{"a": [LONE]}]]}},
    ),
    case("variable name", "BAD_USER_INPUT", body={"query": "{ __typename }", "variables": {"\ud800": 1}}),
    case(
        "client token",
        "BAD_USER_INPUT",
        body={
            "query": 'mutation($t: String) { createWorkspace(input: {workspaceId: "w-x"}, clientToken: $t)'
            " { __typename } }",
            "variables": {"t": "\ud800"},
        },
    ),
    case("global id", "BAD_USER_INPUT", body=node("\ud800")),
    case("cursor", "BAD_USER_INPUT", body=projects_after("\ud800")),
    case(
        "persisted query hash",
        "BAD_USER_INPUT",
        body={"extensions": {"persistedQuery": {"version": 1, "sha256Hash": "\ud800"}}},
    ),
    case("extensions", "BAD_USER_INPUT", body={"query": "{ __typename }", "extensions": {"trace": LONE}}),
    case("documentId", "BAD_USER_INPUT", body={"documentId": "sha256:\ud800"}),
    case("bytes not utf-8", "BAD_USER_INPUT", raw=b'{"query": "{ __typename }", "operationName": "\xff"}'),
    case("utf-8 of a surrogate", "BAD_USER_INPUT", raw=b'{"query": "{ __typename }", "operationName": "\xed\xa0\x80"}'),
    case("overlong utf-8", "BAD_USER_INPUT", raw=b'{"query": "{ __typename \xc0\xaf}"}'),
    case("utf-16 body", "BAD_USER_INPUT", raw='{"query": "{ __typename }"}'.encode("utf-16")),
    case("GET query, utf-8 of a surrogate", "BAD_USER_INPUT", url="query=%7B%20__typename%20%7D%20%23%ED%A0%80"),
    case("GET operationName not utf-8", "BAD_USER_INPUT", url="query=%7B__typename%7D&operationName=%FF"),
    case("GET raw byte not utf-8", "BAD_USER_INPUT", url="query=%7B__typename%7D&x=%C3"),
    case(
        "GET variables escape", "BAD_USER_INPUT", url="query=%7B__typename%7D&variables=%7B%22v%22%3A%22%5Cud800%22%7D"
    ),
    case(
        "GET persisted hash escape",
        "BAD_USER_INPUT",
        url="extensions=%7B%22persistedQuery%22%3A%7B%22version%22%3A1%2C%22sha256Hash%22%3A%22%5Cudc00%22%7D%7D",
    ),
    case(
        "request id header",
        "BAD_USER_INPUT",
        body={"query": "{ __typename }"},
        headers={"X-Request-Id": b"\xed\xa0\x80"},
    ),
    case("api key header", "BAD_USER_INPUT", body={"query": "{ __typename }"}, headers={"X-Api-Key": b"k\xff"}),
    case(
        "bearer token", "BAD_USER_INPUT", body={"query": "{ __typename }"}, headers={"Authorization": b"Bearer \xc3("}
    ),
    case(
        "second operation of a batch",
        "BAD_USER_INPUT",
        body=[{"query": "{ __typename }"}, {"query": WORKSPACE, "variables": {"v": LONE}}],
        tenant=True,
    ),
    # The GraphQL spec makes a lone surrogate escape inside the document a syntax error.
    case("graphql escape", "GRAPHQL_PARSE_FAILED", body={"query": '{ workspace(workspaceId: "\\ud800") { region } }'}),
    case(
        "graphql braced escape",
        "GRAPHQL_PARSE_FAILED",
        body={"query": '{ workspace(workspaceId: "\\u{DFFF}") { region } }'},
    ),
]

NUL = [
    case("in the document", "GRAPHQL_PARSE_FAILED", body={"query": "{ __typename \u0000 }"}),
    case("in operationName", "BAD_USER_INPUT", body={"query": "query A { __typename }", "operationName": "A\u0000"}),
    case(
        "escaped in an inline id",
        "BAD_USER_INPUT",
        body={"query": '{ workspace(workspaceId: "ws\\u0000main") { region } }'},
    ),
    case("in a global id", "BAD_USER_INPUT", body=node(gid("Workspace", "ws\u0000main"))),
    case("after the body", "BAD_REQUEST", raw=b'{"query": "{ __typename }"}\x00'),
    case("in documentId", "BAD_USER_INPUT", body={"documentId": "sha256:\u0000"}),
    case(
        "in a client token",
        "BAD_USER_INPUT",
        body={
            "query": 'mutation { deleteWorkspace(input: {workspaceId: "w-x"}, clientToken: "a\\u0000") { __typename } }'
        },
        typed=True,
    ),
]

HUGE = [
    case("more tokens than allowed", "GRAPHQL_PARSE_FAILED", body={"query": "{ " + "__typename " * 6000 + "}"}),
    case(
        "body over the limit",
        "PAYLOAD_TOO_LARGE",
        body={"query": "{ __typename }", "variables": {"p": "x" * 1_100_000}},
    ),
    case("an id of 900 kB", "BAD_USER_INPUT", body={"query": WORKSPACE, "variables": {"v": "x" * 900_000}}),
    case(
        "an inline id of 900 kB",
        "BAD_USER_INPUT",
        body={"query": '{ workspace(workspaceId: "' + "x" * 900_000 + '") { region } }'},
    ),
    case(
        "operationName of 500 kB",
        "BAD_USER_INPUT",
        body={"query": "query A { __typename }", "operationName": "A" * 500_000},
    ),
    case(
        "a title of 900 kB",
        "BAD_USER_INPUT",
        body={"query": CREATE, "variables": {"input": {"workspaceId": "ws-main", "title": "t" * 900_000}}},
        typed=True,
    ),
    case(
        "200,000 ids",
        "BAD_USER_INPUT",
        body={"query": "query($i: [ID!]!) { nodes(ids: $i) { id } }", "variables": {"i": ["a"] * 200_000}},
    ),
    case(
        "an integer past 64 bits",
        "GRAPHQL_VALIDATION_FAILED",
        body={
            "query": '{ workspace(workspaceId: "ws-main") { projects(first: 99999999999999999999) { totalCount } } }'
        },
    ),
    case(
        "an integer variable past 32 bits",
        "BAD_USER_INPUT",
        body={
            "query": 'query($n: Int) { workspace(workspaceId: "ws-main") { projects(first: $n) { totalCount } } }',
            "variables": {"n": 2**40},
        },
    ),
    case("a cursor of 200 kB", "BAD_USER_INPUT", body=projects_after("A" * 200_000), reads=frozenset({"BatchGetItem"})),
    case("a documentId of 500 kB", "BAD_USER_INPUT", body={"documentId": "sha256:" + "a" * 500_000}),
]

DEEP = [
    case("fields past the depth limit", "COST_LIMIT", body={"query": nested(6)}),
    case("selection sets nested 2000 deep", "GRAPHQL_PARSE_FAILED", body={"query": "{ a" * 2000 + " }" * 2000}),
    case(
        "list literal nested 2400 deep",
        "GRAPHQL_PARSE_FAILED",
        body={"query": "{ students(studentIds: " + "[" * 2400 + "]" * 2400 + ") { name } }"},
    ),
    case(
        "variable list nested 500 deep",
        "BAD_USER_INPUT",
        body={"query": WORKSPACE, "variables": {"v": json.loads("[" * 500 + "]" * 500)}},
    ),
    case(
        "input object nested 5000 deep",
        "BAD_REQUEST",
        raw=b'{"query": "{ __typename }", "variables": {"v": ' + b'{"a": ' * 5000 + b"1" + b"}" * 5000 + b"}}",
    ),
    case(
        "a chain of 40 fragments",
        "COST_LIMIT",
        body={
            "query": "\n".join(
                f"fragment F{i} on Workspace {{ projects(first: 1) {{ nodes {{ workspace {{ ...F{i + 1} }} }} }} }}"
                for i in range(40)
            )
            + '\nfragment F40 on Workspace { region }\n{ workspace(workspaceId: "ws-main") { ...F0 } }'
        },
    ),
]

ALIASES = [
    case(
        "a thousand aliases of __typename",
        "COST_LIMIT",
        body={"query": "{ " + " ".join(f"a{i}: __typename" for i in range(1000)) + " }"},
    ),
    case(
        "31 aliased root reads",
        "COST_LIMIT",
        body={
            "query": "{ " + " ".join(f'w{i}: workspace(workspaceId: "ws-main") {{ region }}' for i in range(31)) + " }"
        },
    ),
    case(
        "aliases multiplied by fragments",
        "COST_LIMIT",
        body={
            "query": "fragment F on Workspace { "
            + " ".join(f"r{i}: region" for i in range(16))
            + ' }\n{ workspace(workspaceId: "ws-main") { ...F p: projects { nodes { workspace { ...F } } } } }'
        },
    ),
    case(
        "one field aliased apart with other arguments",
        "COST_LIMIT",
        body={
            "query": '{ workspace(workspaceId: "ws-main") { '
            + " ".join(f"p{i}: projects(first: {i % 100 + 1}) {{ totalCount }}" for i in range(40))
            + " } }"
        },
    ),
]

FRAGMENTS = [
    case(
        "a cycle of two",
        "GRAPHQL_VALIDATION_FAILED",
        body={"query": "fragment A on Query { ...B } fragment B on Query { ...A } { ...A }"},
    ),
    case(
        "a fragment spreading itself",
        "GRAPHQL_VALIDATION_FAILED",
        body={"query": "fragment A on Query { __typename ...A } { ...A }"},
    ),
    case("an exponential bomb", "COST_LIMIT", body={"query": fragment_bomb(30)}),
    case("an unknown fragment", "GRAPHQL_VALIDATION_FAILED", body={"query": "{ ...Nope }"}),
    case(
        "a fragment on the wrong type",
        "GRAPHQL_VALIDATION_FAILED",
        body={"query": 'fragment F on Course { title } { workspace(workspaceId: "ws-main") { ...F } }'},
    ),
    case(
        "an unused fragment",
        "GRAPHQL_VALIDATION_FAILED",
        body={"query": "fragment F on Query { __typename } { __typename }"},
    ),
]

DIRECTIVES = [
    case(
        "a thousand @skip", "GRAPHQL_PARSE_FAILED", body={"query": "{ __typename " + "@skip(if: false) " * 1000 + "}"}
    ),
    case(
        "repeated @include",
        "GRAPHQL_VALIDATION_FAILED",
        body={"query": "{ __typename " + "@include(if: true) " * 50 + "}"},
    ),
    case(
        "unknown directives",
        "GRAPHQL_VALIDATION_FAILED",
        body={"query": "{ __typename " + " ".join(f"@d{i}" for i in range(200)) + " }"},
    ),
    case("@skip with a string", "GRAPHQL_VALIDATION_FAILED", body={"query": '{ __typename @skip(if: "yes") }'}),
    case(
        "@skip with a variable of the wrong type",
        "BAD_USER_INPUT",
        body={"query": "query($s: Boolean!) { __typename @skip(if: $s) }", "variables": {"s": "no"}},
    ),
]

CURSORS = [
    case("made up", "BAD_USER_INPUT", body=projects_after("abc"), reads=frozenset({"BatchGetItem"})),
    case("empty", "BAD_USER_INPUT", body=projects_after(""), reads=frozenset({"BatchGetItem"})),
    case("not base64", "BAD_USER_INPUT", body=projects_after("!!!!####"), reads=frozenset({"BatchGetItem"})),
    case(
        "base64 of key json",
        "BAD_USER_INPUT",
        body=projects_after(b64(b'{"PK":"WS#ws-big","SK":"PROJ#2026-0001"}')),
        reads=frozenset({"BatchGetItem"}),
    ),
    case(
        "of another parent",
        "BAD_USER_INPUT",
        body=projects_after("<<main>>", "ws-big"),
        reads=frozenset({"BatchGetItem"}),
    ),
    case(
        "of another field",
        "BAD_USER_INPUT",
        body={
            "query": 'query($a: String) { organization(orgName: "o1") { users(after: $a) { nodes { name } } } }',
            "variables": {"a": "<<main>>"},
        },
        reads=frozenset({"BatchGetItem"}),
    ),
    case("truncated", "BAD_USER_INPUT", body=projects_after("<<truncated>>"), reads=frozenset({"BatchGetItem"})),
    case(
        "one character changed", "BAD_USER_INPUT", body=projects_after("<<flipped>>"), reads=frozenset({"BatchGetItem"})
    ),
    case(
        "signed by another deployment",
        "BAD_USER_INPUT",
        body=projects_after("<<main>>"),
        tenant=True,
        reads=frozenset({"BatchGetItem"}),
    ),
    case("of another tenant's partition", "FORBIDDEN", body=projects_after("<<tenant>>", "ws-big"), tenant=True),
]

GLOBAL_IDS = [
    case("not base64", "BAD_USER_INPUT", body=node("not base64!")),
    case("empty", "BAD_USER_INPUT", body=node("")),
    case("unknown type", "BAD_USER_INPUT", body=node(gid("Nope", "x"))),
    case("no ids", "BAD_USER_INPUT", body=node(gid("Workspace"))),
    case("too many ids", "BAD_USER_INPUT", body=node(gid("Workspace", "a", "b"))),
    case("padded", "BAD_USER_INPUT", body=node(gid("Workspace", "ws-main") + "==")),
    case("standard alphabet", "BAD_USER_INPUT", body=node(base64.b64encode(b"Project#ws-main#2026-0001??").decode())),
    case("bytes not utf-8", "BAD_USER_INPUT", body=node(b64(b"Workspace#\xed\xa0\x80"))),
    case("an id over 128 characters", "BAD_USER_INPUT", body=node(gid("Workspace", "w" * 129))),
    case("a control character", "BAD_USER_INPUT", body=node(gid("Workspace", "w\x01"))),
    case("the internal token record", "BAD_USER_INPUT", body=node(gid("Token", "abc"))),
    case("a raw key", "BAD_USER_INPUT", body=node("WS#ws-main")),
    case("another tenant's object", "FORBIDDEN", body=node(gid("Workspace", "ws-big")), tenant=True),
    case(
        "another tenant's among own",
        "FORBIDDEN",
        body={
            "query": "query($i: [ID!]!) { nodes(ids: $i) { id } }",
            "variables": {"i": [gid("Workspace", "ws-main"), gid("Project", "ws-big", "2026-0001")]},
        },
        tenant=True,
    ),
    case(
        "1001 ids",
        "BAD_USER_INPUT",
        body={
            "query": "query($i: [ID!]!) { nodes(ids: $i) { id } }",
            "variables": {"i": [gid("Workspace", "ws-main")] * 1001},
        },
    ),
]

WRONG_TYPES = [
    case(
        "first as text",
        "BAD_USER_INPUT",
        body={
            "query": 'query($n: Int) { workspace(workspaceId: "ws-main") { projects(first: $n) { totalCount } } }',
            "variables": {"n": "ten"},
        },
    ),
    case(
        "first negative",
        "BAD_USER_INPUT",
        body={"query": '{ workspace(workspaceId: "ws-main") { projects(first: -1) { totalCount } } }'},
        reads=frozenset({"BatchGetItem"}),
    ),
    case(
        "first zero",
        "BAD_USER_INPUT",
        body={"query": '{ workspace(workspaceId: "ws-main") { projects(first: 0) { totalCount } } }'},
        reads=frozenset({"BatchGetItem"}),
    ),
    case(
        "first over the page limit",
        "BAD_USER_INPUT",
        body={"query": '{ workspace(workspaceId: "ws-main") { projects(first: 101) { totalCount } } }'},
        reads=frozenset({"BatchGetItem"}),
    ),
    case(
        "first NaN",
        "BAD_USER_INPUT",
        raw=b'{"query": "query($n: Int) { workspace(workspaceId: \\"ws-main\\") {'
        b' projects(first: $n) { totalCount } } }", "variables": {"n": NaN}}',
    ),
    case("an id as an object", "BAD_USER_INPUT", body={"query": WORKSPACE, "variables": {"v": {"id": "ws-main"}}}),
    case("an id as a list", "BAD_USER_INPUT", body={"query": WORKSPACE, "variables": {"v": ["ws-main"]}}),
    case("an id as a boolean", "BAD_USER_INPUT", body={"query": WORKSPACE, "variables": {"v": True}}),
    case("an id as a float", "BAD_USER_INPUT", body={"query": WORKSPACE, "variables": {"v": 1.5}}),
    case("an id as null", "BAD_USER_INPUT", body={"query": WORKSPACE, "variables": {"v": None}}),
    case(
        "an input with an unknown field",
        "BAD_USER_INPUT",
        body={"query": CREATE, "variables": {"input": {"workspaceId": "ws-main", "title": "t", "PK": "WS#x"}}},
    ),
    case(
        "an input without a required field",
        "BAD_USER_INPUT",
        body={"query": CREATE, "variables": {"input": {"workspaceId": "ws-main"}}},
    ),
    case(
        "an inline string for an Int",
        "GRAPHQL_VALIDATION_FAILED",
        body={"query": '{ workspace(workspaceId: "ws-main") { projects(first: "5") { totalCount } } }'},
    ),
    case(
        "an enum-like literal for an ID",
        "GRAPHQL_VALIDATION_FAILED",
        body={"query": "{ workspace(workspaceId: WS) { region } }"},
    ),
    case(
        "a seat limit out of range",
        "BAD_USER_INPUT",
        body={
            "query": 'mutation { createWorkspace(input: {workspaceId: "w-range", displayName: "R", seatLimit: -5})'
            " { __typename } }"
        },
        typed=True,
    ),
]

BAD_IDS = [
    case(
        "a key separator in a create",
        "BAD_USER_INPUT",
        body={"query": 'mutation { createWorkspace(input: {workspaceId: "WS#x", displayName: "x"}) { __typename } }'},
        typed=True,
    ),
    case(
        "a key separator inline",
        "BAD_USER_INPUT",
        body={"query": '{ organization(orgName: "o1#USER#user-01") { name } }'},
    ),
    case("DEL inline", "BAD_USER_INPUT", body={"query": '{ course(courseId: "crs\u007f0001") { title } }'}),
    case(
        "129 characters in a delete",
        "BAD_USER_INPUT",
        body={"query": 'mutation { deleteStudent(input: {studentId: "' + "s" * 129 + '"}) { __typename } }'},
        typed=True,
    ),
    case(
        "a control character in a client token",
        "BAD_USER_INPUT",
        body={
            "query": 'mutation { createWorkspace(input: {workspaceId: "w-ct", displayName: "x"}, clientToken: "t\\n")'
            " { __typename } }"
        },
        typed=True,
    ),
    case(
        "an empty enrolment course",
        "BAD_USER_INPUT",
        body={"query": '{ enrollment(studentId: "stu-0001", courseId: "") { grade } }'},
    ),
]

LISTS = [
    case(
        "1001 inline student ids",
        "BAD_USER_INPUT",
        body={"query": "{ students(studentIds: [" + ",".join('"s"' for _ in range(1001)) + "]) { name } }"},
    ),
    case(
        "100,000 course ids",
        "BAD_USER_INPUT",
        body={
            "query": "query($i: [ID!]!) { courses(courseIds: $i) { title } }",
            "variables": {"i": [f"c{n}" for n in range(100_000)]},
        },
    ),
]

OPERATIONS = [
    case(
        "operationName of another document",
        "BAD_USER_INPUT",
        body={"query": "query A { __typename }", "operationName": "B"},
    ),
    case("operationName as a number", "BAD_REQUEST", body={"query": "query A { __typename }", "operationName": 7}),
    case(
        "operationName for an anonymous operation",
        "BAD_USER_INPUT",
        body={"query": "{ __typename }", "operationName": "A"},
    ),
    case("operationName as an object", "BAD_REQUEST", body={"query": "{ __typename }", "operationName": {"A": 1}}),
    case("a subscription", "GRAPHQL_VALIDATION_FAILED", body={"query": "subscription { __typename }"}),
]

REQUESTS = [
    case("truncated JSON", "BAD_REQUEST", raw=b'{"query": "{ __typename }"'),
    case("single quotes", "BAD_REQUEST", raw=b"{'query': '{ __typename }'}"),
    case("a comment", "BAD_REQUEST", raw=b'{"query": "{ __typename }" /* hi */}'),
    case("a byte order mark", "BAD_REQUEST", raw=b'\xef\xbb\xbf{"query": "{ __typename }"}'),
    case("empty body", "BAD_REQUEST", raw=b""),
    case("null", "BAD_REQUEST", raw=b"null"),
    case("a JSON string", "BAD_REQUEST", raw=b'"{ __typename }"'),
    case("application/graphql", "UNSUPPORTED_MEDIA_TYPE", raw=b"{ __typename }", content_type="application/graphql"),
    case(
        "multipart", "UNSUPPORTED_MEDIA_TYPE", raw=b"--x\r\n\r\n--x--", content_type="multipart/form-data; boundary=x"
    ),
    case(
        "json in utf-16",
        "UNSUPPORTED_MEDIA_TYPE",
        body={"query": "{ __typename }"},
        content_type="application/json; charset=utf-16",
    ),
    case("json-seq", "UNSUPPORTED_MEDIA_TYPE", body={"query": "{ __typename }"}, content_type="application/json-seq"),
    case(
        "GET mutation chosen by name",
        "METHOD_NOT_ALLOWED",
        url="query=query%20A%20%7B__typename%7D%20mutation%20B%20%7B__typename%7D&operationName=B",
    ),
    case(
        "GET mutation with variables",
        "METHOD_NOT_ALLOWED",
        url="query=mutation%7BdeleteWorkspace(input%3A%7BworkspaceId%3A%22ws-main%22%7D)%7B__typename%7D%7D&variables=%7B%7D",
    ),
    case("a batch while batching is off", "BAD_REQUEST", body=[{"query": "{ __typename }"}] * 10_000),
    case("a batch over the limit", "BAD_REQUEST", body=[{"query": "{ __typename }"}] * 3, tenant=True),
    case("a batch of batches", "BAD_REQUEST", body=[[{"query": "{ __typename }"}]], tenant=True),
    case("an empty batch", "BAD_REQUEST", body=[], tenant=True),
    case(
        "a batch of alias bombs",
        "COST_LIMIT",
        body=[{"query": "{ " + " ".join(f"a{i}: __typename" for i in range(100)) + " }"}] * 2,
        tenant=True,
    ),
]

CORPUS = (
    SURROGATES + NUL + HUGE + DEEP + ALIASES + FRAGMENTS + DIRECTIVES + CURSORS + GLOBAL_IDS + WRONG_TYPES + BAD_IDS
)
CORPUS += LISTS + OPERATIONS + REQUESTS


@pytest.fixture(scope="module")
def tenant(gateway_factory: Callable[..., Gateway], contract_table: str) -> Iterator[Gateway]:
    """A gateway where the caller is one tenant (workspace ws-main), batches of two are allowed, and cursors are
    signed with another secret than the open gateway's."""
    keys = {digest(TENANT_KEY): {"sub": "tenant", "workspaces": ["ws-main"]}, digest(ADMIN_KEY): {"roles": ["admin"]}}
    settings = {"auth_open": False, "api_keys": json.dumps(keys), "max_batch": 2, "cursor_secret": "another-secret"}
    with gateway_factory(contract_table, **settings) as running:
        yield running


@pytest.fixture(scope="module")
def cursors(gateway: Gateway, tenant: Gateway) -> dict[str, str]:
    """Real cursors to replay where they do not belong."""
    query = '{ workspace(workspaceId: "ws-main") { projects(first: 1) { pageInfo { endCursor } } } }'

    def end_cursor(on: Gateway, **headers: str) -> str:
        body = on.http.post("/graphql", json={"query": query}, headers=headers).json()
        cursor: str = body["data"]["workspace"]["projects"]["pageInfo"]["endCursor"]
        return cursor

    main = end_cursor(gateway)
    flipped = main[:5] + ("A" if main[5] != "A" else "B") + main[6:]
    return {
        "<<main>>": main,
        "<<truncated>>": main[:-1],
        "<<flipped>>": flipped,
        "<<tenant>>": end_cursor(tenant, **{"X-Api-Key": TENANT_KEY}),
    }


def _content(hostile: Hostile, cursors: dict[str, str]) -> bytes:
    if hostile.raw is not None:
        return hostile.raw
    text = json.dumps(hostile.body)  # ASCII escapes: a lone surrogate goes out as "\ud800"
    for placeholder, value in cursors.items():
        text = text.replace(placeholder, value)
    return text.encode()


def _send(gateway: Gateway, hostile: Hostile, cursors: dict[str, str]) -> tuple[httpx.Response, bytes]:
    headers: dict[str, str | bytes] = {"Accept": GR, **hostile.headers}
    if hostile.tenant:
        headers.setdefault("X-Api-Key", TENANT_KEY)
    gateway.sent.clear()
    if hostile.url is not None:
        return gateway.http.get(f"/graphql?{hostile.url}", headers=headers), hostile.url.encode()
    content = _content(hostile, cursors)
    headers["Content-Type"] = hostile.content_type
    return gateway.http.post("/graphql", content=content, headers=headers), content


def _leaves(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for member in value.values():
            yield from _leaves(member)
    elif isinstance(value, list):
        for member in value:
            yield from _leaves(member)
    else:
        yield value


def test_the_corpus_is_large_enough() -> None:
    assert len(CORPUS) >= 80


@pytest.mark.parametrize("hostile", CORPUS)
def test_hostile_input_is_refused_with_a_code_before_dynamodb_and_leaks_nothing(
    gateway: Gateway, tenant: Gateway, cursors: dict[str, str], hostile: Hostile
) -> None:
    target = tenant if hostile.tenant else gateway
    response, sent = _send(target, hostile, cursors)
    assert response.status_code < 500, response.text
    answer = response.json()
    bodies = answer if isinstance(answer, list) else [answer]
    found: list[str] = []
    for body in bodies:
        found += [error["extensions"]["code"] for error in body.get("errors", [])]
        if hostile.typed:
            results = [result for result in (body.get("data") or {}).values() if result is not None]
            assert results and all(result["__typename"] == "ValidationFailedError" for result in results), body
            found.append("BAD_USER_INPUT")
        else:
            assert all(leaf is None for leaf in _leaves(body.get("data"))), body
    assert hostile.code in found, answer
    assert set(target.sent) <= hostile.reads, f"DynamoDB was asked: {dict(target.sent)}"
    if hostile.reads:
        assert "Query" not in target.sent
    text = response.text
    leaked = [marker for marker in LEAKS if marker in text and marker.encode() not in sent]
    assert not leaked, text[:500]
