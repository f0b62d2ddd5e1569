"""Tables of an HTML document as lists of rows of cell texts (stdlib html.parser), by id."""

from html.parser import HTMLParser


class _Tables(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tables = {}  # id -> rows
        self._stack = []  # (id, rows) of open tables
        self._row = None
        self._cell = None

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self._stack.append((dict(attrs).get("id", ""), []))
        elif tag == "tr" and self._stack:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self._stack[-1][1].append(self._row)
            self._row = None
        elif tag == "table" and self._stack:
            table_id, rows = self._stack.pop()
            self.tables[table_id] = rows

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def tables(html):
    parser = _Tables()
    parser.feed(html)
    return parser.tables
