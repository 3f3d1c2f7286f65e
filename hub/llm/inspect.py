"""Read a GGUF file's header cheaply (no weights, no llama.cpp) for `bolt-hub check` and the engine.

Reports architecture, parameter count, training context, whether a chat template is embedded,
file size, and an estimate of memory: weights (the file's tensor data) plus a KV cache of
n_ctx tokens. The estimate leaves out llama.cpp's compute buffers (tens to a few hundred MiB)
and counts every layer's cache even for models that share KV between layers, so it errs high.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from hub.llm.types import EngineError

GGUF_MAGIC = b"GGUF"
# Bytes per cached element for the KV cache types the hub offers (q8_0/q4_0: 32-value blocks).
KV_BYTES_PER_ELEMENT = {"f16": 2.0, "q8_0": 34 / 32, "q4_0": 18 / 32}

_SCALARS = {  # GGUF value type → struct format
    0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d",
}
_STRING, _ARRAY = 8, 9
_KEEP_ARRAY_MAX = 4096  # longer arrays (vocabularies) are skipped, only their length kept
_MAX_STRING = 64 * 1024 * 1024


@dataclass(frozen=True)
class SkippedArray:
    """A long array (token list, scores, merges) whose contents were not read."""

    length: int


class _Reader:
    def __init__(self, handle: BinaryIO, size: int) -> None:
        self.handle = handle
        self.size = size

    def read(self, count: int) -> bytes:
        data = self.handle.read(count)
        if len(data) != count:
            raise EOFError
        return data

    def unpack(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.read(struct.calcsize(fmt)))[0]

    def string(self) -> str:
        length = self.unpack("<Q")
        if length > _MAX_STRING or length > self.size:
            raise ValueError(f"string length {length} is impossible")
        return self.read(length).decode("utf-8", errors="replace")

    def skip_string(self) -> None:
        length = self.unpack("<Q")
        if length > _MAX_STRING:
            raise ValueError(f"string length {length} is impossible")
        self.handle.seek(length, 1)

    def value(self, kind: int) -> Any:
        if kind in _SCALARS:
            return self.unpack(_SCALARS[kind])
        if kind == _STRING:
            return self.string()
        if kind == _ARRAY:
            item_kind = self.unpack("<I")
            length = self.unpack("<Q")
            if length > self.size:
                raise ValueError(f"array length {length} is impossible")
            if length <= _KEEP_ARRAY_MAX:
                return [self.value(item_kind) for _ in range(length)]
            if item_kind in _SCALARS:
                self.handle.seek(length * struct.calcsize(_SCALARS[item_kind]), 1)
            elif item_kind == _STRING:
                for _ in range(length):
                    self.skip_string()
            else:
                raise ValueError("nested long arrays are not supported")
            return SkippedArray(length)
        raise ValueError(f"unknown value type {kind}")


@dataclass
class GGUFReport:
    """What `bolt-hub check` shows about a model file."""

    path: Path
    file_size: int
    version: int
    metadata: dict[str, Any] = field(repr=False)
    n_params: int
    n_ctx: int  # the context the estimate is for
    kv_cache_type: str

    def _arch_value(self, key: str, default: Any = None) -> Any:
        return self.metadata.get(f"{self.architecture}.{key}", default)

    @property
    def languages(self) -> tuple[str, ...]:
        """The languages the file says its model speaks ("en"; none said: empty)."""
        said = self.metadata.get("general.languages")
        return tuple(str(code).lower() for code in said) if isinstance(said, list) else ()

    @property
    def architecture(self) -> str:
        return str(self.metadata.get("general.architecture", "unknown"))

    @property
    def name(self) -> str:
        return str(self.metadata.get("general.name") or self.path.stem)

    @property
    def n_ctx_train(self) -> int:
        return int(self._arch_value("context_length", 0) or 0)

    @property
    def chat_template(self) -> str | None:
        template = self.metadata.get("tokenizer.chat_template")
        return template if isinstance(template, str) and template else None

    def _per_layer(self, key: str, default: int) -> list[int]:
        value = self._arch_value(key, default)
        n_layer = int(self._arch_value("block_count", 0) or 0)
        if isinstance(value, list):
            return [int(v) for v in value[:n_layer]]
        return [int(value)] * n_layer

    def kv_cache_bytes(self, n_ctx: int | None = None, kv_cache_type: str | None = None) -> int:
        """Bytes of K and V for `n_ctx` tokens over all layers (0 when the header lacks sizes)."""
        n_ctx = self.n_ctx if n_ctx is None else n_ctx
        per_element = KV_BYTES_PER_ELEMENT[kv_cache_type or self.kv_cache_type]
        n_embd = int(self._arch_value("embedding_length", 0) or 0)
        heads = self._per_layer("attention.head_count", 0)
        kv_heads = self._per_layer("attention.head_count_kv", 0) if f"{self.architecture}.attention.head_count_kv" in self.metadata else heads
        total = 0
        for n_head, n_head_kv in zip(heads, kv_heads):
            if not n_head:
                continue
            key_len = int(self._arch_value("attention.key_length", n_embd // n_head))
            value_len = int(self._arch_value("attention.value_length", n_embd // n_head))
            total += n_ctx * n_head_kv * (key_len + value_len)
        return int(total * per_element)

    def memory_bytes(self, n_ctx: int | None = None, kv_cache_type: str | None = None) -> int:
        return self.file_size + self.kv_cache_bytes(n_ctx, kv_cache_type)

    def describe(self) -> list[str]:
        mib = 1024 * 1024
        template = "embedded" if self.chat_template else "none (the hub uses its built-in format)"
        return [
            f"name: {self.name}",
            f"architecture: {self.architecture}",
            f"parameters: {self.n_params / 1e9:.2f} B" if self.n_params >= 1e9 else f"parameters: {self.n_params / 1e6:.0f} M",
            f"training context: {self.n_ctx_train} tokens",
            f"chat template: {template}",
            f"file size: {self.file_size / mib:.0f} MiB",
            f"memory estimate at n_ctx={self.n_ctx} ({self.kv_cache_type} KV cache): "
            f"{self.memory_bytes() / mib:.0f} MiB (weights {self.file_size / mib:.0f} MiB "
            f"+ KV cache {self.kv_cache_bytes() / mib:.0f} MiB, plus compute buffers)",
        ]

    def problems(self, n_ctx: int | None = None) -> list[str]:
        n_ctx = self.n_ctx if n_ctx is None else n_ctx
        found = []
        if self.n_ctx_train and n_ctx > self.n_ctx_train:
            found.append(
                f"n_ctx {n_ctx} is more than the {self.n_ctx_train} tokens {self.name} was trained "
                f"for: lower n_ctx to {self.n_ctx_train} or less"
            )
        if not self.n_params:
            found.append(f"{self.path.name} holds no weights (a vocabulary-only file?)")
        return found


def inspect_gguf(path: str | Path, n_ctx: int = 8192, kv_cache_type: str = "f16") -> GGUFReport:
    """Read the header of a GGUF file; EngineError with a plain explanation when it cannot."""
    path = Path(path)
    if kv_cache_type not in KV_BYTES_PER_ELEMENT:
        raise EngineError(f"unknown kv_cache_type {kv_cache_type!r}: use one of {', '.join(KV_BYTES_PER_ELEMENT)}")
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            return _read(handle, path, size, n_ctx, kv_cache_type)
    except FileNotFoundError:
        raise EngineError(f"model file not found: {path}") from None
    except IsADirectoryError:
        raise EngineError(f"model path is a folder, not a GGUF file: {path}") from None
    except PermissionError:
        raise EngineError(f"model file is not readable (permissions): {path}") from None
    except (EOFError, ValueError, struct.error, UnicodeDecodeError) as err:
        detail = "it ends early" if isinstance(err, EOFError) else str(err)
        raise EngineError(f"model file {path} is corrupt or truncated: {detail}") from None


def _read(handle: BinaryIO, path: Path, size: int, n_ctx: int, kv_cache_type: str) -> GGUFReport:
    magic = handle.read(4)
    if magic != GGUF_MAGIC:
        raise EngineError(f"{path} is not a GGUF model file (it does not start with 'GGUF')")
    reader = _Reader(handle, size)
    version = reader.unpack("<I")
    if version not in (2, 3):
        raise EngineError(f"{path} uses GGUF version {version}; only versions 2 and 3 are supported")
    n_tensors = reader.unpack("<Q")
    n_kv = reader.unpack("<Q")
    if n_tensors > size or n_kv > size:
        raise ValueError("impossible tensor or key counts in the header")
    metadata: dict[str, Any] = {}
    for _ in range(n_kv):
        key = reader.string()
        metadata[key] = reader.value(reader.unpack("<I"))
    n_params = 0
    for _ in range(n_tensors):
        reader.skip_string()
        n_dims = reader.unpack("<I")
        if n_dims > 8:
            raise ValueError(f"tensor with {n_dims} dimensions")
        count = 1
        for _ in range(n_dims):
            count *= reader.unpack("<Q")
        reader.read(12)  # type (u32) and offset (u64)
        n_params += count
    return GGUFReport(path, size, version, metadata, n_params, n_ctx, kv_cache_type)
