"""The format of saved environment states (AtariVectorEnv.clone_state and restore_state).

A state is one row of uint8 per environment: a 64-byte header, then the
environment's state as cule/cpp/vector/state_rows.hpp lays it out. The header makes a
row self-describing, so a row can be restored into any environment of an env
built for the same ROM and options, in this process or another
(``torch.save``/``torch.load`` keep the tensor as it is):

    bytes  0-3   b"CuLE"
           4-7   format version (little-endian uint32)
           8-15  key: a digest of the ROM, the env's options and the layout
          16-19  bytes after the header (little-endian uint32)
          20     1 if the row holds the sticky-action RNG, else 0
          21-23  zero
          24-55  the game id (or the ROM's md5), ASCII, zero-padded
          56-63  the payload's digest: the sum of its little-endian 32-bit
                 words, mod 2^64 (little-endian uint64)

The digest catches damage in storage or transfer (any one flipped bit
changes it). It is no defence against a crafted row, which can carry the
right digest: before a payload is loaded, every field the emulator uses as
an index, a loop bound or a shift is checked (cule/cpp/vector/state_check.hpp;
docs/states.md), so any bytes either load as a console that steps or are
refused with a StateError naming the row, part and field.
"""
from __future__ import annotations

import hashlib
import struct
import weakref

import numpy as np
import torch

from .errors import StateError

MAGIC = b"CuLE"
VERSION = 3
HEADER_BYTES = 64
_NAME_BYTES = 32
DIGEST = slice(56, 64)  # header bytes of the payload's digest; every other header byte is the same in all rows
_HEADER_FIELDS = (("magic", 4), ("format version", 8), ("key", 16), ("payload length", 20), ("include_rng flag", 24),
                  ("game name", 56))  # each field's name and end, as the docstring lays them out


def state_key(fields: dict) -> bytes:
    """8 bytes naming everything a row's meaning depends on: ROM, options and layout (`fields`, plain values)."""
    text = repr(sorted(fields.items())).encode()
    return hashlib.blake2b(text, digest_size=8).digest()


def header(name: str, key: bytes, payload: int, with_rng: bool) -> np.ndarray:
    """The 64 header bytes of rows with `payload` bytes of state, the digest zero (set_digests fills it)."""
    raw = (MAGIC + struct.pack("<I", VERSION) + key + struct.pack("<I", payload) + bytes([int(with_rng), 0, 0, 0])
           + name.encode("ascii", "replace")[:_NAME_BYTES].ljust(_NAME_BYTES, b"\0") + bytes(8))
    assert len(raw) == HEADER_BYTES
    return np.frombuffer(raw, dtype=np.uint8).copy()


def set_digests(rows: torch.Tensor, digests: torch.Tensor) -> None:
    """Writes each row's digest (int64 [n], the bits of the uint64 sum) into its header."""
    rows[:, DIGEST] = digests.to(rows.device).contiguous().view(torch.uint8).view(len(digests), 8)


def digests(rows: torch.Tensor) -> torch.Tensor:
    """The digests the rows' headers hold, int64 [n] (the bits of uint64), on the rows' device."""
    return rows[:, DIGEST].reshape(-1).clone().view(torch.int64)


def raise_faults(faults: np.ndarray, name: str) -> None:
    """StateError for the first row whose payload check failed (faults: Backend.check_states's codes)."""
    bad = np.flatnonzero(faults)
    if not bad.size:
        return
    from . import _core
    row = int(bad[0])
    fault, part, field, rule = _core.state_faults[int(faults[row]) - 1]
    others = f" ({bad.size} of {len(faults)} rows were refused)" if bad.size > 1 else ""
    if fault == "kStateDigest":
        message = (f"state row {row} of {name!r} does not sum to the digest in its header: it changed after "
                   f"clone_state() wrote it (damage in storage or transfer, or an edit){others}; nothing was "
                   f"restored")
    else:
        message = (f"state row {row} of {name!r}: {part} field {field} must be {rule}; the row was not made by "
                   f"clone_state() or was damaged{others}; nothing was restored")
    raise StateError(message, row=row, part=part, field=field)


def as_rows(states) -> torch.Tensor:
    """`states` (torch or numpy uint8, [n, bytes] or one row [bytes]) as a 2-D uint8 tensor, or StateError."""
    if isinstance(states, np.ndarray):
        states = torch.from_numpy(states)
    if not isinstance(states, torch.Tensor):
        raise StateError(f"states must be the uint8 tensor clone_state() returned, got {type(states).__name__}")
    if states.dtype != torch.uint8:
        raise StateError(f"states must be uint8 (as clone_state() returns them), got {states.dtype}")
    if states.dim() == 1:
        states = states.unsqueeze(0)
    if states.dim() != 2 or states.shape[1] < HEADER_BYTES:
        raise StateError(f"states must have shape [n, state bytes] as clone_state() returns them, "
                         f"got {tuple(states.shape)}")
    return states


def stated_bytes(rows: torch.Tensor) -> int:
    """The row length the first row's header states (at most the rows'): a mixed batch pads each game's rows to
    its widest game's."""
    payload = struct.unpack("<I", rows[0, 16:20].cpu().numpy().tobytes())[0]
    return min(rows.shape[1], HEADER_BYTES + payload)


def read_headers(rows: torch.Tensor, name: str, key: bytes, payload_of) -> bool:
    """Checks every row's header against this env (game `name`, `key`, payload_of(with_rng) bytes); returns
    whether the rows hold the sticky-action RNG. Raises StateError saying what differs; reads only headers."""
    heads = rows[:, :DIGEST.start].cpu().numpy()
    first = heads[0].tobytes()
    if (heads != heads[0]).any():
        row, at = map(int, np.argwhere(heads != heads[0])[0])
        field = next(name for name, end in _HEADER_FIELDS if at < end)
        raise StateError(f"row {row}'s header differs from row 0's in its {field} (byte {at}): the rows come from "
                         f"different games, options or include_rng settings (restore them with separate calls), "
                         f"or a header was damaged")
    if first[:4] != MAGIC:
        raise StateError("these rows are not cule states (no b'CuLE' header): pass what clone_state() returned")
    version = struct.unpack("<I", first[4:8])[0]
    if version != VERSION:
        raise StateError(f"the states are in format version {version}; this cule reads version {VERSION}. "
                         f"Clone them again with this version")
    their_name = first[24:24 + _NAME_BYTES].rstrip(b"\0").decode("ascii", "replace")
    if their_name != name:
        raise StateError(f"the states are of {their_name!r}, this environment plays {name!r}")
    if first[8:16] != key:
        raise StateError(f"the states of {name!r} were cloned from an env with other options (frameskip, stack, "
                         f"observation size, autoreset, reset or ALE settings) or another cule layout; build the env "
                         f"with the same arguments (device, num_envs and threads may differ)")
    with_rng = bool(first[20])
    payload = struct.unpack("<I", first[16:20])[0]
    if payload != payload_of(with_rng) or rows.shape[1] != HEADER_BYTES + payload:
        raise StateError(f"state rows of {rows.shape[1]} bytes, expected {HEADER_BYTES + payload_of(with_rng)}")
    return with_rng


def differences(a: torch.Tensor, b: torch.Tensor, layout: list[tuple[str, int]]) -> list[str]:
    """Where two sets of state rows (same shape, header first) differ, by part of `layout` (an Emulator's
    state_layout): one line per row and part, with its differing bytes' count and first offset in the part."""
    a, b = a.cpu().numpy(), b.cpu().numpy()
    if a.shape != b.shape:
        return [f"shapes differ: {a.shape} and {b.shape}"]
    lines = []
    parts = [("header", HEADER_BYTES), *layout]
    for row in np.flatnonzero((a != b).any(axis=1)):
        start = 0
        for name, size in parts:
            diff = np.flatnonzero(a[row, start:start + size] != b[row, start:start + size])
            if diff.size:
                lines.append(f"row {row}, {name}: {diff.size} of {size} bytes differ, first at +{diff[0]}")
            start += size
    return lines


class IssuedRows:
    """The tensors clone_state() handed out. One restored unchanged (the same tensor, its version counter as it
    was) skips the digest pass, the one check that reads the whole payload: nothing outside this process can have
    changed it. Edits through .numpy(), .data or DLPack do not move the counter; the field checks still see them."""

    def __init__(self):
        self._rows: dict[int, tuple] = {}

    def add(self, rows: torch.Tensor) -> torch.Tensor:
        key = id(rows)
        self._rows[key] = (weakref.ref(rows, lambda _, key=key, issued=self._rows: issued.pop(key, None)),
                           rows._version)
        return rows

    def __contains__(self, rows: torch.Tensor) -> bool:
        ref, version = self._rows.get(id(rows), (None, None))
        return ref is not None and ref() is rows and rows._version == version
