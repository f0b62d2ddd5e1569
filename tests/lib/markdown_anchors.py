"""The anchors GitHub gives the headings of a Markdown file, for the lints that check links."""

import re


def heading_slug(text: str) -> str:
    """GitHub's rule: lowercase, punctuation dropped (word characters, '-' and spaces stay),
    each space a '-'. Inline code keeps its text, its backticks go."""
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def markdown_anchors(path: str) -> set[str]:
    """Every heading's anchor outside code blocks; a repeated heading gets -1, -2, ... as on
    GitHub."""
    anchors: set[str] = set()
    seen: dict[str, int] = {}
    in_code = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.lstrip().startswith("```"):
                in_code = not in_code
                continue
            m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if m and not in_code:
                slug = heading_slug(m.group(1))
                n = seen.get(slug, 0)
                anchors.add(slug if n == 0 else f"{slug}-{n}")
                seen[slug] = n + 1
    return anchors
