"""Emit the translated labels of an F8 game (prototype): one label per executed ROM byte of each bank."""
import sys
from gen_common import length, is_jam, TIA_STORES
rom = open(sys.argv[1], "rb").read()
keys = sorted(int(x) for x in open(sys.argv[2]))  # image offsets
LAST = 0xFF6  # the code window ends below the hotspots' operands
def ABSISH(op):
    cc, bbb = op & 3, (op >> 2) & 7
    if cc in (1, 3):
        return bbb in (0, 3, 4, 6, 7)
    return bbb in (3, 7)
labels = set()
for r in keys:
    if (r & 0xFFF) < LAST and not is_jam(rom[r]):
        labels.add(r)
out = []
for r in sorted(labels):
    bank, off = r >> 12, r & 0xFFF
    op = rom[r]
    n = length(op)
    b1 = rom[bank * 4096 + ((off + 1) & 0xFFF)]
    b2 = rom[bank * 4096 + ((off + 2) & 0xFFF)]
    lines = [f"tr_{r:04X}: {{  /* bank {bank} {off:03X}: {op:02X} */", "  c.pc = (uint16_t)(c.pc + 1);"]
    if op in TIA_STORES and not (b1 & 0x80) and (b1 & 0x3F) < 45:
        kind, name = TIA_STORES[op]
        lines.append(f"  store_to_tia<0x{b1 & 0x3F:02X}, 0x{op:02X}, M::Zp, S::{name}>(c, bus);")
    else:
        lines.append(f"  proto_execute<0x{op:02X}>(c, bus);")
    lines += ["  CULE_INSTRUCTION_DONE();", "  if (!bus.next_instruction()) goto scanline_done;"]
    succ = []
    if (op & 0x1F) == 0x10:
        rel = b1 - 256 if b1 >= 128 else b1
        succ = [off + 2 + rel, off + 2]
    elif op in (0x4C, 0x20):
        succ = [(b1 | b2 << 8) & 0xFFF]
    elif op in (0x60, 0x40, 0x6C, 0x00):
        succ = []
    else:
        nxt = bank * 4096 + off + n
        if off + n < LAST and nxt in labels:
            guard = f"PROTO_BANK({bank}) && " if ABSISH(op) else ""
            if guard:
                lines.append(f"  if ({guard[:-4]}) {{ PROTO_CHECK({nxt}); goto tr_{nxt:04X}; }}")
            else:
                lines.append(f"  PROTO_CHECK({nxt}); goto tr_{nxt:04X};")
    pcbase = 0xF000  # the pc's upper bits: compare within the 4K page only
    for s in succ:
        t = bank * 4096 + (s & 0xFFF)
        if 0 <= s < 0x1000 and t in labels:
            lines.append(f"  if ((c.pc & 0x1FFF) == {0x1000 | (s & 0xFFF)}) goto tr_{t:04X};")
    lines += ["  PROTO_FALLBACK();", "}"]
    out.append("\n".join(lines))
table = ["nullptr"] * len(rom)
for r in labels:
    table[r] = f"&&tr_{r:04X}"
open(sys.argv[3] + "/tr_labels.inc", "w").write("\n".join(out) + "\n")
open(sys.argv[3] + "/tr_table.inc", "w").write(",\n".join(table) + "\n")
print(len(labels), "labels")
