"""A library on a table of its own: three more of the one-to-many strategies of Alex DeBrie's article.

| entity  | PK                     | SK                                 | GSI1PK                 | GSI1SK           |
|---------|------------------------|------------------------------------|------------------------|------------------|
| Country | COUNTRY#<countryCode>  | COUNTRY                            |                        |                  |
| Branch  | COUNTRY#<countryCode>  | LOC#<state>#<city>#<branchId>      |                        |                  |
| Author  | AUTHOR#<authorId>      | AUTHOR                             | AUTHOR#<authorId>      | AUTHOR           |
| Book    | BOOK#<bookId>          | BOOK                               | AUTHOR#<authorId>      | BOOK#<bookId>    |
| Patron  | PATRON#<patronId>      | PATRON                             |                        |                  |

- **A composite sort key hierarchy** (the article's Starbucks locations): a country's branches sort by state, then
  city, so ``branches(state:, city:)`` is one Query with ``begins_with`` on ``LOC#<state>#<city>#``.
- **Complex attributes** (the article's mailing addresses on the customer): a patron's addresses are a list of
  maps on the patron's own item, a branch's address and a patron's card are maps; all are served with the item.
- **Duplicated data** (the article's author on each book): each book holds its author's name, so a book is served
  with its author's name and no read of the author; renaming an author rewrites the copies.

``COUNTRY`` sorts before ``LOC#`` and ``AUTHOR`` before ``BOOK#``: an ascending Query returns the country with its
first branches, and the author with its first books (in GSI1).
"""

from __future__ import annotations

from collections.abc import Iterator

from gateway import Attribute, Collection, Copy, Declaration, Entity, Index, Item, KeyShape, Link, Model, Shape

ADDRESS = Shape(
    "PostalAddress",
    {
        "label": Attribute("S", "What the address is to its owner.", enum=("home", "work", "other")),
        "street": Attribute("S", "Street and number.", max_length=200),
        "city": Attribute("S", "The city.", max_length=100),
        "state": Attribute("S", "The state or region.", max_length=100),
        "zip": Attribute("S", "The postal code.", max_length=20),
    },
    "A postal address, stored as a map on the item it belongs to.",
)
CARD = Shape(
    "LibraryCard",
    {
        "number": Attribute("S", "The number printed on the card.", max_length=40),
        "expires": Attribute("DATE", "The last day the card is valid."),
        "interests": Attribute("L", "Subjects the patron follows.", element="S", max_items=10),
    },
    "A patron's library card, stored as a map on the patron's item.",
)

COUNTRY = Entity(
    "Country",
    {None: KeyShape.of("COUNTRY#{countryCode}", "COUNTRY")},
    {
        "name": Attribute("S", "The country's name."),
        "branch_count": Attribute(
            "INT", "How many branches the country has, kept exact by the writes.", writable=False
        ),
    },
    description="A country with library branches: one partition holds it and its branches.",
)
BRANCH = Entity(
    "Branch",
    {None: KeyShape.of("COUNTRY#{countryCode}", "LOC#{state}#{city}#{branchId}")},
    {
        "name": Attribute("S", "The branch's name.", required=True),
        "address": Attribute("M", "Where the branch is.", shape=ADDRESS),
        "opened": Attribute("DATE", "When the branch opened."),
    },
    description="A library branch, sorted in its country by state, then city.",
)
AUTHOR = Entity(
    "Author",
    {
        None: KeyShape.of("AUTHOR#{authorId}", "AUTHOR"),
        "GSI1": KeyShape.of("AUTHOR#{authorId}", "AUTHOR"),
    },
    {
        "name": Attribute("S", "The author's name; each of their books holds a copy.", required=True),
        "birth_year": Attribute("INT", "The year the author was born.", minimum=0, maximum=3000),
        "book_count": Attribute("INT", "How many books the author has, kept exact by the writes.", writable=False),
    },
    description="An author; their books are found in GSI1.",
)
BOOK = Entity(
    "Book",
    {
        None: KeyShape.of("BOOK#{bookId}", "BOOK"),
        "GSI1": KeyShape.of("AUTHOR#{authorId}", "BOOK#{bookId}"),
    },
    {
        "title": Attribute("S", "The book's title.", required=True),
        "published": Attribute("INT", "The year of first publication.", minimum=0, maximum=3000),
        "author_name": Attribute(
            "S", "The author's name, copied from the author: served with no read of the author.", writable=False
        ),
    },
    description="A book, with a copy of its author's name.",
)
PATRON = Entity(
    "Patron",
    {None: KeyShape.of("PATRON#{patronId}", "PATRON")},
    {
        "name": Attribute("S", "The patron's name.", required=True),
        "addresses": Attribute("L", "Where to send books, at most 20.", shape=ADDRESS, max_items=20),
        "card": Attribute("M", "The patron's library card.", shape=CARD),
        "notes": Attribute("L", "The staff's notes, at most 500 of 1000 characters each.", element="S", max_items=500),
    },
    description="A patron of the library, with their addresses on their own item.",
)

COUNTRY_BRANCHES = Collection(
    "Country.branches",
    COUNTRY,
    BRANCH,
    counter="branch_count",
    description="By state, then city, then branch id; narrowed to a state, or a state and a city, by one Query.",
    levels=("state", "city"),
)
AUTHOR_BOOKS = Collection(
    "Author.books", AUTHOR, BOOK, index="GSI1", counter="book_count", description="By book id, in GSI1."
)

MODEL = Model(
    table="library",
    indexes=(Index(None, "PK", "SK"), Index("GSI1", "GSI1PK", "GSI1SK")),
    entities=(COUNTRY, BRANCH, AUTHOR, BOOK, PATRON),
    collections=(COUNTRY_BRANCHES, AUTHOR_BOOKS),
    links=(
        Link("Branch.country", BRANCH, COUNTRY, "The country the branch is in."),
        Link("Book.author", BOOK, AUTHOR, "The book's author: a read of its own, where authorName needs none."),
    ),
    copies=(Copy(AUTHOR_BOOKS, "author_name", "name"),),
)

BRANCHES = {
    "US": [
        ("CA", "San Francisco", "sf-main", "Main Library", "100 Larkin St", "94102"),
        ("CA", "San Francisco", "sf-mission", "Mission Branch", "300 Bartlett St", "94110"),
        ("CA", "San Jose", "sj-king", "King Library", "150 E San Fernando St", "95112"),
        ("CA", "Los Angeles", "la-central", "Central Library", "630 W 5th St", "90071"),
        ("TX", "Spring", "spring-1", "Spring Branch", "1 Spring Rd", "77373"),
        ("TX", "Springtown", "springtown-1", "Springtown Library", "2 Main St", "76082"),
        ("WA", "Seattle", "sea-central", "Central Library", "1000 4th Ave", "98104"),
    ],
    "CA": [
        ("ON", "Toronto", "tor-ref", "Reference Library", "789 Yonge St", "M4W 2G8"),
        ("QC", "Montreal", "mtl-grande", "Grande Bibliotheque", "475 Bd de Maisonneuve E", "H2L 5C4"),
    ],
}
AUTHORS = {
    "stephen-king": ("Stephen King", 1947, [("carrie", "Carrie", 1974), ("the-shining", "The Shining", 1977)]),
    "agatha-christie": ("Agatha Christie", 1890, [(f"christie-{n:02d}", f"Novel {n}", 1920 + n) for n in range(66)]),
}


def seed() -> Iterator[Item]:
    """Nine branches in two countries, two authors and their books (each with its author's name), two patrons."""
    for country, branches in BRANCHES.items():
        yield MODEL.item(COUNTRY, {"countryCode": country}, {"name": {"US": "United States", "CA": "Canada"}[country]})
        for state, city, branch_id, name, street, code in branches:
            ids = {"countryCode": country, "state": state, "city": city, "branchId": branch_id}
            address = {"street": street, "city": city, "state": state, "zip": code}
            yield MODEL.item(BRANCH, ids, {"name": name, "address": address})
    for author_id, (name, born, books) in AUTHORS.items():
        yield MODEL.item(AUTHOR, {"authorId": author_id}, {"name": name, "birth_year": born})
        for book_id, title, year in books:
            ids = {"bookId": book_id, "authorId": author_id}
            yield MODEL.item(BOOK, ids, {"title": title, "published": year, "author_name": name})
    home = {"label": "home", "street": "1 Elm St", "city": "Portland", "state": "ME", "zip": "04101"}
    work = {"label": "work", "street": "5 Oak Ave", "city": "Portland", "state": "OR", "zip": "97204"}
    card = {"number": "0001-2345", "expires": "2027-12-31", "interests": ["mystery", "horror"]}
    yield MODEL.item(PATRON, {"patronId": "ada"}, {"name": "Ada", "addresses": [home, work], "card": card})
    yield MODEL.item(PATRON, {"patronId": "bob"}, {"name": "Bob", "addresses": []})


LIBRARY = Declaration(MODEL, seed=seed)
"""``tablegraph serve --model schema.library:LIBRARY``: no tenancy, so every caller reads and admins write."""
