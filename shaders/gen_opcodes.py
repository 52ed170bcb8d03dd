#!/usr/bin/env python3
"""Writes opcodes.glsl from the op lists in vkt.h, so the shaders number ops
exactly as the C enums in ref.h do (both come from the same X-macro lists)."""
import re
import sys

header, out = sys.argv[1], sys.argv[2]
text = open(header, encoding="utf-8").read()
lines = ["// Op codes shared with backend/ref.h; written at build time from vkt.h.\n"]
for macro, prefix in (("VKT_UNARY_OPS", "UN_"), ("VKT_BINARY_OPS", "BIN_")):
    m = re.search(r"#define %s\(X\)(.*?)\n\n" % macro, text, re.S)
    if not m:
        sys.exit("gen_opcodes: %s not found in %s" % (macro, header))
    names = re.findall(r"X\((\w+),\s*\w+\)", m.group(1))
    for i, name in enumerate(names):
        lines.append("#define %s%s %du\n" % (prefix, name, i))
open(out, "w", encoding="utf-8").write("".join(lines))
