"""The 6507 facts the generators need: instruction lengths, the JAM opcodes, the zero-page stores to the TIA."""


def length(op):
    cc, bbb = op & 3, (op >> 2) & 7
    if op in (0x00,):
        return 1
    if op in (0x40, 0x60):
        return 1
    if op == 0x20:
        return 3
    if cc == 1 or cc == 3:
        return {0: 2, 1: 2, 2: 2, 3: 3, 4: 2, 5: 2, 6: 3, 7: 3}[bbb]
    if cc == 2:
        if bbb == 0:
            return 2 if op in (0x82, 0xA2, 0xC2, 0xE2) else 1
        return {1: 2, 2: 1, 3: 3, 4: 1, 5: 2, 6: 1, 7: 3}[bbb]
    # cc == 0
    if bbb == 0:
        return 2  # NOP#, LDY#, CPY#, CPX#
    return {1: 2, 2: 1, 3: 3, 4: 2, 5: 2, 6: 1, 7: 3}[bbb]
def is_jam(op):
    return (op & 0x1F) == 0x12 or op in (0x02, 0x22, 0x42, 0x62)
TIA_STORES = {0x85: (0, "STA"), 0x86: (1, "STX"), 0x84: (2, "STY")}
