"""A code-hosting site's single-table design, declared the way a team with this table would, from the docs alone.

It is the shape of the well-known public design for a code-hosting service (accounts, repositories and their
forks, issues and pull requests numbered from one sequence, comments, reactions, stars), written here from scratch
with our own names and data. Its table is filled with plain boto3, in the stored spelling: a ``Type`` attribute,
numbers zero-padded in one key and plain in another, prefixes glued to a field, a repository's update time as an
index sort key, variant index keys for originals and forks.

    User          PK=ACCOUNT#<username>  SK=ACCOUNT#<username>            Type=User
                  GSI3PK=ACCOUNT#<username>  GSI3SK=ACCOUNT#<username>
    Organization  PK=ACCOUNT#<orgName>   SK=ACCOUNT#<orgName>             Type=Organization (same shapes)
                  GSI3PK=ACCOUNT#<orgName>  GSI3SK=ACCOUNT#<orgName>
    Membership    PK=ACCOUNT#<orgName>   SK=MEMBERSHIP#<username>
                  GSI1PK=ACCOUNT#<username>  GSI1SK=MEMBERSHIP#<orgName>  (a user's organizations)
    Repo          PK=SK=REPO#<owner>#<repoName>
                  GSI1PK=GSI1SK=REPO#<owner>#<repoName>                   (heads its pull requests)
                  GSI2PK=REPO#<owner>#<repoName> GSI2SK=#REPO#<repoName>  (an original, heading its forks) or
                  GSI2PK=REPO#<originalOwner>#<repoName> GSI2SK=FORK#<owner>  (a fork, under its original)
                  GSI3PK=ACCOUNT#<owner>  GSI3SK=#<updatedAt>             (an account's repos, by update time)
    Issue         PK=REPO#<owner>#<repoName>  SK=ISSUE#<number:07>
    PullRequest   PK=SK=PR#<owner>#<repoName>#<number:07>
                  GSI1PK=REPO#<owner>#<repoName>  GSI1SK=PR#<number:07>
    IssueComment  PK=ISSUECOMMENT#<owner>#<repoName>#<number>  SK=ISSUECOMMENT#<commentId>  (number plain here)
    Star          PK=REPO#<owner>#<repoName>  SK=STAR#<username>
    Reaction      PK=SK=<kind>REACTION#<owner>#<repoName>#<number>#<username>   (kind glued: ISSUE, PR)
"""

from __future__ import annotations

from typing import Any

from gateway import Attribute, Collection, Declaration, Entity, Index, KeyShape, Link, Model, Numbering

TABLE = Index(None, "PK", "SK")
GSI1 = Index("GSI1", "GSI1PK", "GSI1SK")
GSI2 = Index("GSI2", "GSI2PK", "GSI2SK")
GSI3 = Index("GSI3", "GSI3PK", "GSI3SK")
GSI4 = Index("GSI4", "GSI4PK", "GSI4SK")

ACCOUNT_USER = KeyShape.of("ACCOUNT#{username}", "ACCOUNT#{username}")
ACCOUNT_ORG = KeyShape.of("ACCOUNT#{orgName}", "ACCOUNT#{orgName}")

USER = Entity(
    "User",
    {None: ACCOUNT_USER, "GSI3": ACCOUNT_USER},
    {"Name": "S", "Email": "S", "repoCount": Attribute("INT", writable=False)},
    discriminator=("Type", "User"),
)
ORGANIZATION = Entity(
    "Organization",
    {None: ACCOUNT_ORG, "GSI3": ACCOUNT_ORG},
    {"Name": "S", "memberCount": Attribute("INT", writable=False), "plan": "JSON"},
    discriminator=("Type", "Organization"),
)
MEMBERSHIP = Entity(
    "Membership",
    {
        None: KeyShape.of("ACCOUNT#{orgName}", "MEMBERSHIP#{username}"),
        "GSI1": KeyShape.of("ACCOUNT#{username}", "MEMBERSHIP#{orgName}"),
    },
    {"Role": Attribute("S", enum={"admin": "Manages the organization.", "member": "Belongs to it."})},
)
ORIGINAL = KeyShape.of("REPO#{owner}#{repoName}", "#REPO#{repoName}")
FORK = KeyShape.of("REPO#{originalOwner}#{repoName}", "FORK#{owner}")
REPO = Entity(
    "Repo",
    {
        None: KeyShape.of("REPO#{owner}#{repoName}", "REPO#{owner}#{repoName}"),
        "GSI1": KeyShape.of("REPO#{owner}#{repoName}", "REPO#{owner}#{repoName}"),
        "GSI2": ORIGINAL,
        "GSI3": KeyShape.of("ACCOUNT#{owner}", "#{updatedAt}"),
    },
    {
        "Description": "S",
        "updatedAt": Attribute("S", "When the repository last changed, as an ISO timestamp.", required=True),
        "Topics": "SS",
        "issuePrNumber": Attribute("INT", "The last issue or pull request number taken.", writable=False),
        "StarCount": Attribute("INT", writable=False),
        "ForkCount": Attribute("INT", writable=False),
        "IssueCount": Attribute("INT", writable=False),
    },
    variants={"GSI2": (FORK,)},
)
NUMBERS = Numbering("Repo", "issuePrNumber")
ISSUE = Entity(
    "Issue",
    {
        None: KeyShape.of("REPO#{owner}#{repoName}", "ISSUE#{number:07}"),
        "GSI4": KeyShape.of("REPO#{owner}#{repoName}", "ISSUE#{Status}#{number:07}"),
    },
    {
        "Title": Attribute("S", required=True),
        "Status": Attribute("S", required=True, default="open", enum={"open": "Open.", "closed": "Closed."}),
    },
    mint="number",
    minted=NUMBERS,
)
PULL_REQUEST = Entity(
    "PullRequest",
    {
        None: KeyShape.of("PR#{owner}#{repoName}#{number:07}", "PR#{owner}#{repoName}#{number:07}"),
        "GSI1": KeyShape.of("REPO#{owner}#{repoName}", "PR#{number:07}"),
    },
    {"Title": Attribute("S", required=True)},
    mint="number",
    minted=NUMBERS,
)
ISSUE_COMMENT = Entity(
    "IssueComment",
    {None: KeyShape.of("ISSUECOMMENT#{owner}#{repoName}#{number}", "ISSUECOMMENT#{commentId}")},
    {"Body": Attribute("S", required=True), "author": "S"},
    mint="commentId",
    minted="ulid",
)
STAR = Entity("Star", {None: KeyShape.of("REPO#{owner}#{repoName}", "STAR#{username}")}, {"starredAt": "S"})
REACTION_KEY = KeyShape.of(
    "{kind}REACTION#{owner}#{repoName}#{number}#{username}", "{kind}REACTION#{owner}#{repoName}#{number}#{username}"
)
REACTION = Entity("Reaction", {None: REACTION_KEY}, {"Emoji": "S"})

MODEL = Model(
    table="hosting",
    indexes=(TABLE, GSI1, GSI2, GSI3, GSI4),
    entities=(USER, ORGANIZATION, MEMBERSHIP, REPO, ISSUE, PULL_REQUEST, ISSUE_COMMENT, STAR, REACTION),
    collections=(
        Collection("Organization.members", ORGANIZATION, MEMBERSHIP, target=USER, counter="memberCount"),
        Collection(
            "User.organizations", USER, MEMBERSHIP, "GSI1", target=ORGANIZATION, partition={"username": "username"}
        ),
        Collection("User.repos", USER, REPO, "GSI3", ascending=False, partition={"owner": "username"}),
        Collection("Organization.repos", ORGANIZATION, REPO, "GSI3", ascending=False, partition={"owner": "orgName"}),
        Collection("Repo.issues", REPO, ISSUE, ascending=False, counter="IssueCount"),
        Collection("Repo.pullRequests", REPO, PULL_REQUEST, "GSI1", ascending=False),
        Collection("Repo.issuesByStatus", REPO, ISSUE, "GSI4", ascending=False, levels=("Status",)),
        Collection(
            "Repo.forks",
            REPO,
            REPO,
            "GSI2",
            shape=FORK,
            partition={"originalOwner": "owner", "repoName": "repoName"},
            counter="ForkCount",
        ),
        Collection("Repo.stargazers", REPO, STAR, target=USER, counter="StarCount"),
        Collection("Issue.comments", ISSUE, ISSUE_COMMENT, root="commentsOfIssue"),
    ),
    links=(
        Link("Membership.user", MEMBERSHIP, USER),
        Link("Membership.organization", MEMBERSHIP, ORGANIZATION),
        Link("Issue.repo", ISSUE, REPO),
        Link("PullRequest.repo", PULL_REQUEST, REPO),
        Link("Repo.original", REPO, REPO, ids={"owner": "originalOwner"}),
        Link("Star.user", STAR, USER),
        Link("IssueComment.issue", ISSUE_COMMENT, ISSUE),
    ),
)
HOSTING = Declaration(MODEL)


def items() -> list[dict[str, Any]]:
    """The fixture, spelled as the table stores it: literal key strings, never the gateway's key code."""
    out: list[dict[str, Any]] = []
    for name in ("ann", "bob", "cy", "dee"):
        key = f"ACCOUNT#{name}"
        out.append({"PK": key, "SK": key, "GSI3PK": key, "GSI3SK": key, "Type": "User", "Name": name.title()})
    for org, members in (("acme", ("ann", "bob", "cy")), ("initech", ("bob",))):
        key = f"ACCOUNT#{org}"
        out.append(
            {
                "PK": key,
                "SK": key,
                "GSI3PK": key,
                "GSI3SK": key,
                "Type": "Organization",
                "Name": org.title(),
                "memberCount": len(members),
                "plan": {"tier": "team", "seats": 10},
            }
        )
        for n, member in enumerate(members):
            out.append(
                {
                    "PK": key,
                    "SK": f"MEMBERSHIP#{member}",
                    "GSI1PK": f"ACCOUNT#{member}",
                    "GSI1SK": f"MEMBERSHIP#{org}",
                    "Role": "admin" if n == 0 else "member",
                }
            )
    repos = (
        ("acme", "rocket", "2026-01-05T10:00:00Z", None),
        ("acme", "anvil", "2026-03-01T09:30:00Z", None),
        ("ann", "notes", "2026-02-11T08:00:00Z", None),
        ("bob", "rocket", "2026-04-02T12:00:00Z", "acme"),
        ("cy", "rocket", "2026-02-20T16:45:00Z", "acme"),
    )
    for owner, name, updated, original in repos:
        key = f"REPO#{owner}#{name}"
        item: dict[str, Any] = {
            "PK": key,
            "SK": key,
            "GSI1PK": key,
            "GSI1SK": key,
            "GSI3PK": f"ACCOUNT#{owner}",
            "GSI3SK": f"#{updated}",
            "updatedAt": updated,
            "Description": f"{owner}'s {name}",
        }
        if original is None:
            item |= {"GSI2PK": key, "GSI2SK": f"#REPO#{name}"}
        else:
            item |= {"GSI2PK": f"REPO#{original}#{name}", "GSI2SK": f"FORK#{owner}"}
        out.append(item)
    rocket = next(item for item in out if item["PK"] == "REPO#acme#rocket")
    rocket |= {"issuePrNumber": 12, "StarCount": 3, "ForkCount": 2, "IssueCount": 8, "Topics": {"space", "cli"}}
    # Issues and pull requests of acme/rocket share numbers 1..12: issues are the odd ones and 12, PRs the rest.
    for number in range(1, 13):
        padded = f"{number:07d}"
        if number % 2 or number == 12:
            out.append(
                {
                    "PK": "REPO#acme#rocket",
                    "SK": f"ISSUE#{padded}",
                    "Title": f"Issue {number}",
                    "Status": "open" if number % 3 else "closed",
                    "GSI4PK": "REPO#acme#rocket",
                    "GSI4SK": f"ISSUE#{'open' if number % 3 else 'closed'}#{padded}",
                }
            )
        else:
            key = f"PR#acme#rocket#{padded}"
            out.append(
                {"PK": key, "SK": key, "GSI1PK": "REPO#acme#rocket", "GSI1SK": f"PR#{padded}", "Title": f"PR {number}"}
            )
    for n, author in enumerate(("bob", "cy", "ann")):
        out.append(
            {
                "PK": "ISSUECOMMENT#acme#rocket#7",
                "SK": f"ISSUECOMMENT#01J{n}ZZZZZZZZZZZZZZZZZZZZZZ",
                "Body": f"comment {n + 1}",
                "author": author,
            }
        )
    for user in ("ann", "bob", "dee"):
        out.append({"PK": "REPO#acme#rocket", "SK": f"STAR#{user}", "starredAt": "2026-05-01"})
    for kind, number, user, emoji in (("ISSUE", 7, "bob", "+1"), ("PR", 4, "cy", "heart"), ("ISSUE", 7, "cy", "eyes")):
        key = f"{kind}REACTION#acme#rocket#{number}#{user}"
        out.append({"PK": key, "SK": key, "Emoji": emoji})
    return out
