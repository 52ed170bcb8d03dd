"""Prints the GNU build id (hex) of an ELF file: the libtorch_cpu a torch adapter is compiled
against, which the shim matches before it loads the adapter."""
import os
import struct
import sys


def build_id(path):
    with open(os.path.realpath(path), "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        raise SystemExit(f"{path}: not a 64-bit ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    for i in range(shnum):
        off = shoff + i * shentsize
        sh_type, = struct.unpack_from("<I", data, off + 4)
        if sh_type != 7:  # SHT_NOTE
            continue
        sh_offset, sh_size = struct.unpack_from("<QQ", data, off + 0x18)
        pos, end = sh_offset, sh_offset + sh_size
        while pos + 12 <= end:
            namesz, descsz, ntype = struct.unpack_from("<III", data, pos)
            name = data[pos + 12:pos + 12 + namesz]
            desc_at = pos + 12 + ((namesz + 3) & ~3)
            if ntype == 3 and name[:3] == b"GNU":
                return data[desc_at:desc_at + descsz].hex()
            pos = desc_at + ((descsz + 3) & ~3)
    raise SystemExit(f"{path}: no build id")


if __name__ == "__main__":
    print(build_id(sys.argv[1]))
