"""What a terminal, an XML 1.0 parser and a browser may be handed, checked the same way by every
test that looks at hucprof's output (issue 37: names from outside are escaped for where they go)."""


def bad_characters(data):
    """What in `data` (bytes) a terminal or XML 1.0 must not be handed: [] when it is UTF-8
    without control characters (but line breaks) and without the noncharacters U+FFFE/U+FFFF."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return ["not UTF-8: %s" % e]
    return ["%r at %d" % (c, i) for i, c in enumerate(text)
            if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) <= 0x9f or c in "\ufffe\uffff"]
