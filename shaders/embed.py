#!/usr/bin/env python3
"""Embeds compiled SPIR-V modules into C: spirv_table.c holds the words and
spirv_table.h one SPV_<name> index per module. Usage: embed.py OUT.c OUT.h SPV..."""
import os
import sys

out_c, out_h, spvs = sys.argv[1], sys.argv[2], sys.argv[3:]
names = [os.path.basename(p)[: -len(".spv")] for p in spvs]
with open(out_h, "w", encoding="utf-8") as h:
    h.write("/* Embedded SPIR-V modules, one per shader variant (built by embed.py). */\n")
    h.write("#ifndef VKT_SPIRV_TABLE_H\n#define VKT_SPIRV_TABLE_H\n#include <stddef.h>\n#include <stdint.h>\n\n")
    h.write("typedef struct spv_module { const char *name; const uint32_t *code; size_t size; } spv_module;\n")
    h.write("extern const spv_module spv_table[] __attribute__((visibility(\"hidden\")));\n\nenum spv_id {\n")
    for n in names:
        h.write("    SPV_%s,\n" % n)
    h.write("    SPV__COUNT\n};\n\n#endif\n")
with open(out_c, "w", encoding="utf-8") as c:
    c.write('#include "spirv_table.h"\n\n')
    for n, p in zip(names, spvs):
        data = open(p, "rb").read()
        words = [int.from_bytes(data[i:i + 4], "little") for i in range(0, len(data), 4)]
        c.write("static const uint32_t spv_%s[%d] = {\n" % (n, len(words)))
        for i in range(0, len(words), 8):
            c.write("    " + ", ".join("0x%08x" % w for w in words[i:i + 8]) + ",\n")
        c.write("};\n")
    c.write("\nconst spv_module spv_table[] = {\n")
    for n in names:
        c.write('    {"%s", spv_%s, sizeof spv_%s},\n' % (n, n, n))
    c.write("};\n")
