"""The example domains merged into one schema, over the key design in ``schema.model``."""

from __future__ import annotations

import strawberry

from gateway.extensions import Accounting, ErrorPolicy, GatewaySchema, Limits
from schema.enrollments import EnrollmentQueries
from schema.model import MODEL, TENANCY
from schema.mutations import Mutation
from schema.organizations import OrganizationQueries
from schema.workspaces import WorkspaceQueries


@strawberry.type
class Query(WorkspaceQueries, OrganizationQueries, EnrollmentQueries):
    pass


SCHEMA = GatewaySchema(query=Query, mutation=Mutation, extensions=[ErrorPolicy, Limits, Accounting])

__all__ = ["MODEL", "SCHEMA", "TENANCY"]
