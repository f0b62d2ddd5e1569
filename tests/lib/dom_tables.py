"""Tables of an HTML document as lists of rows of cell texts (stdlib html.parser), by id, and
the same rows of the cells' title attributes (their hover text; None without one)."""

from html.parser import HTMLParser


class _Tables(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tables = {}  # id -> rows
        self.titles = {}  # id -> rows of titles
        self._stack = []  # (id, rows, title rows) of open tables
        self._row = None
        self._row_titles = None
        self._cell = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self._stack.append((dict(attrs).get("id", ""), [], []))
        elif tag == "tr" and self._stack:
            self._row, self._row_titles = [], []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []
            self._row_titles.append(dict(attrs).get("title"))

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self._stack[-1][1].append(self._row)
            self._stack[-1][2].append(self._row_titles)
            self._row = self._row_titles = None
        elif tag == "table" and self._stack:
            table_id, rows, titles = self._stack.pop()
            self.tables[table_id] = rows
            self.titles[table_id] = titles

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def _parsed(html):
    parser = _Tables()
    parser.feed(html)
    return parser


def tables(html):
    return _parsed(html).tables


def titles(html):
    """The cells' title attributes, in the shape tables() gives their texts."""
    return _parsed(html).titles
