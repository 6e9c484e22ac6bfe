#!/usr/bin/env python3
"""Turn a collected module-memory case into the form the decoder tests read.

Each case under tests/optics/ keeps the dump exactly as its source printed it (`--- hex`: ethtool
`hex on` rows, `hexdump -C`, a C byte array, or ethtool --debug netlink blocks) and the decoded
output (`--- decoded`). This script parses the posted dump into bytes and appends `--- pages`: one
`[name]` per half page (the file names `fabricdoctor snapshot` stores under
ethtool/<if>/module-eeprom/: lower, page-00h, a2-lower, ...) with 8 rows of 16 hex bytes.

    python3 tests/optics/canonicalize.py tests/optics/*.txt

Standard library only. A dump that does not parse into whole half pages is an error.
"""

import re
import sys


def sections(text):
    parts, name = {}, "header"
    for line in text.splitlines():
        match = re.match(r"^--- (\w+)", line)
        if match:
            name = match.group(1)
            parts[name] = []
        else:
            parts.setdefault(name, []).append(line)
    return parts


def flat_bytes(lines):
    """ethtool `hex on` (0xNNNN: bytes), hexdump -C (NNNNNNNN  bytes |ascii|, '*' repeats), or a C array."""
    memory = {}
    last_row, last_offset = None, None
    for line in lines:
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped == "*":
            last_row = ("repeat", last_row)
            continue
        hexdump = re.match(r"^([0-9a-fA-F]{8})\s+((?:[0-9a-fA-F]{2}\s+){1,16})", stripped)
        ethtool = re.match(r"^0x([0-9a-fA-F]{2,4}):\s+((?:[0-9a-fA-F]{2}\s*){1,16})$", stripped)
        carray = re.findall(r"0x([0-9a-fA-F]{2})\b(?!:)", stripped)
        if hexdump:
            offset = int(hexdump.group(1), 16)
            row = bytes(int(b, 16) for b in hexdump.group(2).split())
            if isinstance(last_row, tuple):  # fill the rows a '*' stood for
                _, repeated = last_row
                for fill in range(last_offset + 16, offset, 16):
                    for i, b in enumerate(repeated):
                        memory[fill + i] = b
            for i, b in enumerate(row):
                memory[offset + i] = b
            last_row, last_offset = row, offset
        elif ethtool:
            offset = int(ethtool.group(1), 16)
            for i, b in enumerate(ethtool.group(2).split()):
                memory[offset + i] = int(b, 16)
        elif carray:
            start = len(memory)
            for i, b in enumerate(carray):
                memory[start + i] = int(b, 16)
    if not memory:
        return b""
    size = max(memory) + 1
    missing = [o for o in range(size) if o not in memory]
    if missing:
        raise SystemExit(f"gap in the dump at offsets {missing[:4]}...")
    return bytes(memory[o] for o in range(size))


def cmis_pages(lines):
    """`# lower page 00h` / `# upper page NNh` sections of `0xNN: bytes` rows (CMIS byte addresses)."""
    pages, current = {}, None
    for line in lines:
        header = re.match(r"^# (lower|upper) page ([0-9a-fA-F]{2})h", line.strip())
        if header:
            current = "lower" if header.group(1) == "lower" else f"page-{header.group(2).lower()}h"
            pages[current] = {}
            continue
        row = re.match(r"^0x([0-9a-fA-F]{2}):\s+((?:[0-9a-fA-F]{2}\s*){16})$", line.strip())
        if row and current:
            offset = int(row.group(1), 16) % 128
            for i, b in enumerate(row.group(2).split()):
                pages[current][offset + i] = int(b, 16)
    return {name: bytes(data[o] for o in range(128)) for name, data in pages.items()}


def netlink_blocks(lines):
    """ethtool --debug: OFFSET/PAGE attributes, then the data rows of each reply."""
    pages, offset, page, data = {}, None, None, []
    for line in lines:
        stripped = line.strip()
        match = re.match(r"ETHTOOL_A_MODULE_EEPROM_(OFFSET|PAGE) = (\d+)", stripped)
        if match:
            if match.group(1) == "OFFSET":
                if data and offset is not None:
                    pages[(offset, page)] = bytes(data)
                offset, data = int(match.group(2)), []
            else:
                page = int(match.group(2))
            continue
        row = re.match(r"^(?:0x[0-9a-fA-F]+:)?\s*((?:[0-9a-fA-F]{2}\s+){3,}[0-9a-fA-F]{2})$", stripped)
        if row and offset is not None:
            data.extend(int(b, 16) for b in row.group(1).split())
    if data and offset is not None:
        pages[(offset, page)] = bytes(data)
    named = {}
    for (offset, page), data in pages.items():
        named["lower" if offset == 0 else f"page-{page:02x}h"] = data[:128]
    return named


def half_pages(kind, lines):
    text = "\n".join(lines)
    if "# lower page" in text:
        return cmis_pages(lines)
    if "ETHTOOL_A_MODULE_EEPROM_OFFSET" in text:
        return netlink_blocks(lines)
    flat = flat_bytes(lines)
    if kind == "sff8472":
        # A0h 0-255 then A2h 0-255; the halves the decoder reads are A0h 0-127 and A2h 0-127.
        names = ["lower", "page-00h", "a2-lower", "a2-page-00h"]
    else:
        # ethtool's flat layout for SFF-8636: lower, upper 00h, then upper 01h, 02h, 03h.
        names = ["lower", "page-00h", "page-01h", "page-02h", "page-03h"]
    return {names[i]: flat[128 * i:128 * (i + 1)] for i in range(len(flat) // 128)}


def main(paths):
    for path in paths:
        text = open(path).read()
        parts = sections(text)
        kind = next((l.split(":", 1)[1].strip() for l in parts["header"] if l.startswith("# kind:")), "")
        pages = half_pages(kind, parts.get("hex", []))
        for name, data in pages.items():
            if len(data) != 128:
                raise SystemExit(f"{path}: {name} has {len(data)} bytes")
        text = text.split("\n--- pages\n")[0].rstrip("\n") + "\n--- pages\n"
        for name, data in pages.items():
            text += f"[{name}]\n"
            for row in range(8):
                text += " ".join(f"{b:02x}" for b in data[16 * row:16 * row + 16]) + "\n"
        open(path, "w").write(text)
        print(f"{path}: {', '.join(pages)}")


if __name__ == "__main__":
    main(sys.argv[1:])
