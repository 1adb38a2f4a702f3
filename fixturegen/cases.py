"""Every case of the stream corpus, in generation order: reference streams first, as the others edit them."""

from __future__ import annotations

from .foreign import foreign_recipes
from .malformed import malformed_recipes
from .recipe import CorpusError, Recipe
from .reference import reference_recipes


def all_recipes() -> list[Recipe]:
    recipes = [*reference_recipes(), *foreign_recipes(), *malformed_recipes()]
    seen: set[str] = set()
    for r in recipes:
        if r.id in seen:
            raise CorpusError(f"two recipes share the id {r.id}")
        seen.add(r.id)
    return recipes
