"""The example domains merged into one schema, over the key design in ``schema.model``."""

from __future__ import annotations

import strawberry

from gateway.extensions import Accounting, ErrorPolicy, GatewaySchema
from schema.enrollments import EnrollmentQueries
from schema.model import MODEL
from schema.organizations import OrganizationQueries
from schema.workspaces import WorkspaceQueries


@strawberry.type
class Query(WorkspaceQueries, OrganizationQueries, EnrollmentQueries):
    pass


SCHEMA = GatewaySchema(query=Query, extensions=[ErrorPolicy, Accounting])

__all__ = ["MODEL", "SCHEMA"]
