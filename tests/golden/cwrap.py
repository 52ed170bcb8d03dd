#!/usr/bin/env python3
"""Wraps the C that the golden-data generators write at 100 columns (the tree's column rule).

A float array (`static const float name[n] = {...};`) is packed into as many values a line as fit;
any other line longer than the limit is broken after a comma outside string literals, its
continuation indented four columns deeper. Only blanks and line breaks change, so every value
stays as written. gen_conv.py and gen_window.py pass what they write through wrap(); run on
headers, this rewraps them in place (as was done for headers written before the rule).

Usage: cwrap.py HEADER...
"""
import re
import sys

WIDTH = 100
ARRAY = re.compile(r"static const float \w+\[\d+\] = \{")


def pieces(text):
    """text cut after each comma outside string literals, each piece with its comma."""
    out, cur, quoted, i = [], "", False, 0
    while i < len(text):
        ch = text[i]
        cur += ch
        if quoted and ch == "\\" and i + 1 < len(text):
            cur += text[i + 1]
            i += 1
        elif ch == '"':
            quoted = not quoted
        elif ch == "," and not quoted:
            out.append(cur)
            cur = ""
        i += 1
    return out + ([cur] if cur else [])


def fill(first, cont, items, sep):
    """items joined by sep on lines of at most WIDTH columns, the first starting with first."""
    lines, cur = [], first
    for item in items:
        if cur.strip() and len(cur) + len(sep) + len(item) > WIDTH and cur != first and cur != cont:
            lines.append(cur.rstrip())
            cur = cont + item
        else:
            cur += (sep if cur not in (first, cont) and not cur.endswith(" ") else "") + item
    return lines + [cur.rstrip()]


def wrap_line(line):
    if len(line) <= WIDTH:
        return [line]
    indent = re.match(r" *", line).group(0)
    items = [p.strip() for p in pieces(line)]
    return fill(indent, indent + "    ", items, " ")


def wrap(text):
    lines, out, i = text.split("\n"), [], 0
    while i < len(lines):
        m = ARRAY.match(lines[i])
        if m:
            stmt = lines[i]
            while not stmt.rstrip().endswith("};"):
                i += 1
                stmt += lines[i].strip()
            values = stmt[m.end():].rstrip()
            assert values.endswith("};")
            items = values[:-2].split(",")
            items = [v + "," for v in items[:-1]] + [items[-1] + "};"]
            out += fill(m.group(0), "    ", items, "")
        else:
            out += wrap_line(lines[i])
        i += 1
    return "\n".join(out)


def main(paths):
    for path in paths:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        with open(path, "w", encoding="utf-8") as f:
            f.write(wrap(text))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
