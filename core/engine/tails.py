"""The end of a task's output as it arrives: the last bytes of one pipe kept, the rest counted,
the task's secrets masked before anything is cut or decoded."""

from __future__ import annotations

from core.team.secrets import SecretMask


class Tail:
    """The last ``limit`` bytes of one pipe, and how many earlier bytes were dropped.

    The task's secrets are masked in the bytes as they arrive (:class:`core.team.secrets.SecretMask`),
    before the tail is cut or decoded: neither a cut nor a value that is not UTF-8 lets a piece through."""

    def __init__(self, limit: int, secrets: tuple[str, ...] = ()) -> None:
        self.limit = limit
        self.data = bytearray()
        self.dropped = 0
        self.mask = SecretMask(secrets)

    def add(self, chunk: bytes) -> None:
        self._keep(self.mask.feed(chunk))

    def _keep(self, chunk: bytes) -> None:
        self.data += chunk
        if len(self.data) > self.limit:
            cut = len(self.data) - self.limit
            self.dropped += cut
            del self.data[:cut]

    def so_far(self) -> str:
        """The tail as it stands, without ending the mask (bytes it still holds are not shown yet)."""
        return bytes(self.data).decode("utf-8", errors="replace")

    def text(self) -> str:
        self._keep(self.mask.end())
        body = bytes(self.data).decode("utf-8", errors="replace")
        return f"[… {self.dropped:,} earlier bytes not kept]\n{body}" if self.dropped else body
