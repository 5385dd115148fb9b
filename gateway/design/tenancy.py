"""Tenancy: which id fields of a design name a tenant, and the grant in a caller's claims that admits each."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gateway.design.model import Model


@dataclass(frozen=True)
class Tenancy:
    """Which id fields name a tenant, and the grant (a list in the caller's claims) that admits each."""

    grants: Mapping[str, str]

    def validate(self, model: Model) -> None:
        known = set().union(*(entity.all_id_fields for entity in model.entities))
        unknown = set(self.grants) - known
        if unknown:
            raise ValueError(f"tenancy names id fields the model does not have: {sorted(unknown)}")
        if len(set(self.grants.values())) != len(self.grants):
            raise ValueError("each tenant id field needs a grant of its own")
        for entity in model.entities:
            folded = sorted(set(self.grants) & set(entity.folded_ids))
            if folded:
                raise ValueError(
                    f"tenancy: {entity.name}'s keys fold {folded[0]} ({{{folded[0]}:{entity.folded_ids[folded[0]]}}}),"
                    " so tenants whose ids differ only in case would share its items, while grants are compared as"
                    f" given: write it {{{folded[0]}}} in every key, or drop it from tenancy"
                )

    @property
    def grant_names(self) -> tuple[str, ...]:
        return tuple(self.grants.values())
