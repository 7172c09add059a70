"""Emit the translated labels of a 2K or 4K game (prototype): one label per executed ROM address."""
import sys

from gen_common import TIA_STORES, is_jam, length

rom = open(sys.argv[1], "rb").read()
pcs = sorted(int(x) for x in open(sys.argv[2]))
MASK = len(rom) - 1  # 2K: 0x7FF
labels = {}
out = []
table = ["nullptr"] * (MASK + 1)
for pc in pcs:
    if not (pc & 0x1000):
        continue
    off = pc & MASK
    if off in labels:
        continue
    op = rom[off]
    if is_jam(op) or (len(rom) == 4096 and off >= 0xFFE):
        continue
    labels[off] = pc
for off, pc in sorted(labels.items()):
    op = rom[off]
    n = length(op)
    lines = [f"tr_{off:04X}: {{  /* {pc:04X}: {op:02X} */", "  c.pc = (uint16_t)(c.pc + 1);"]
    if op in TIA_STORES and not (rom[(off + 1) & MASK] & 0x80) and (rom[(off + 1) & MASK] & 0x3F) < 45:
        kind, name = TIA_STORES[op]
        w = rom[(off + 1) & MASK] & 0x3F
        lines.append(f"  store_to_tia<0x{w:02X}, 0x{op:02X}, M::Zp, S::{name}>(c, bus);")
    else:
        lines.append(f"  proto_execute<0x{op:02X}>(c, bus);")
    lines.append("  CULE_INSTRUCTION_DONE();")
    lines.append("  if (!bus.next_instruction()) goto scanline_done;")
    succ = []
    if (op & 0x1F) == 0x10:  # branches
        rel = rom[(off + 1) & MASK]
        rel = rel - 256 if rel >= 128 else rel
        succ = [(pc + 2 + rel) & 0xFFFF, (pc + 2) & 0xFFFF]
    elif op in (0x4C, 0x20):
        succ = [rom[(off + 1) & MASK] | rom[(off + 2) & MASK] << 8]
    elif op in (0x60, 0x40, 0x6C, 0x00):
        succ = []
    else:
        nxt = (off + n) & MASK
        if nxt in labels:
            lines.append(f"  PROTO_CHECK({nxt}); goto tr_{nxt:04X};")
            lines.append("}")
            out.append("\n".join(lines))
            continue
    for s in succ:
        if (s & 0x1000) and (s & MASK) in labels:
            lines.append(f"  if (c.pc == {s}) goto tr_{s & MASK:04X};")
    lines.append("  PROTO_FALLBACK();")
    lines.append("}")
    out.append("\n".join(lines))
for off in labels:
    table[off] = f"&&tr_{off:04X}"
open(sys.argv[3] + "/tr_labels.inc", "w").write("\n".join(out) + "\n")
open(sys.argv[3] + "/tr_table.inc", "w").write(",\n".join(table) + "\n")
print(len(labels), "labels")
