"""The contract's order of a spec's keys, for writing files.

At the top a spec's keys go in :data:`core.spec.canonical.KEY_ORDER`; inside ``task`` and
``retry`` in the order of the models' fields. A new file is written in that
order; a person's file keeps its own, and a key added to it goes beside the keys
the contract puts next to it (:func:`insertion_points`). Keys the contract does
not know go after the known ones, in the order they came.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from core.spec.canonical import KEY_ORDER
from core.spec.model import AlertRoute, BusinessCalendar, Retry, Task

Path = tuple[Any, ...]
"""Where a value sits in the spec: ``()`` for the top, ``("task",)`` inside the task."""


def _aliases(model: Any) -> list[str]:
    return [info.alias or name for name, info in model.model_fields.items()]


#: The key order of each mapping whose keys the contract knows.
KEY_ORDERS: dict[Path, list[str]] = {
    (): KEY_ORDER,
    ("task",): _aliases(Task),
    ("retry",): _aliases(Retry),
    ("businessCalendar",): _aliases(BusinessCalendar),
    ("alerts",): _aliases(AlertRoute),
}


def rank(path: Path, key: Any) -> int | None:
    """Where ``key`` goes among its siblings in the contract's order; None when the contract has no order."""
    order = KEY_ORDERS.get(path)
    if order is None or key not in order:
        return None
    return order.index(key)


def contract_order(keys: Sequence[Any], path: Path) -> list[Any]:
    """``keys`` in the contract's order; keys it does not know keep their order, after the known ones."""
    known = sorted((k for k in keys if rank(path, k) is not None), key=lambda k: rank(path, k) or 0)
    return known + [k for k in keys if rank(path, k) is None]


def insertion_points(existing: Sequence[Any], added: Sequence[Any], path: Path) -> list[tuple[int | None, list[Any]]]:
    """Where each added key goes among the existing ones: after existing key number ``i``, or
    before the first one for ``None``; added keys with no place in the contract go last.

    A key goes after the last existing key that the contract orders before it, so a file
    written in another order keeps it and each new key still lands beside its neighbours.
    """
    groups: dict[int | None, list[Any]] = {}
    last = len(existing) - 1 if existing else None
    ranks = [rank(path, k) for k in existing]
    for key in contract_order(added, path):
        r = rank(path, key)
        anchor: int | None = last
        if r is not None:
            before = [i for i, ri in enumerate(ranks) if ri is not None and ri < r]
            anchor = before[-1] if before else None
        groups.setdefault(anchor, []).append(key)
    return sorted(groups.items(), key=lambda item: -1 if item[0] is None else item[0])


def merged_order(old: Mapping[Any, Any] | None, new: Mapping[Any, Any], path: Path = ()) -> dict[Any, Any]:
    """``new`` with the keys in ``old``'s order and added keys where :func:`insertion_points` puts them,
    nested mappings likewise; what ``old`` did not have is in the contract's order."""
    if old is None:
        return {k: ordered(new[k], (*path, k)) for k in contract_order(list(new), path)}
    kept = [k for k in old if k in new]
    added = [k for k in new if k not in old]
    points = dict(insertion_points(kept, added, path))
    order: list[Any] = list(points.get(None, []))
    for i, key in enumerate(kept):
        order.append(key)
        order += points.get(i, [])
    out: dict[Any, Any] = {}
    for key in order:
        value, before = new[key], old.get(key)
        if isinstance(value, Mapping) and isinstance(before, Mapping):
            out[key] = merged_order(before, value, (*path, key))
        else:
            out[key] = ordered(value, (*path, key))
    return out


def ordered(value: Any, path: Path = ()) -> Any:
    """``value`` with every mapping in it in the contract's order."""
    if isinstance(value, Mapping):
        return merged_order(None, value, path)
    if isinstance(value, list):
        return [ordered(item, path) for item in value]
    return value
