// Compiled with `tsc --strict --noEmit` against the types graphql-codegen generated from schema/schema.graphql.
import type { TypedDocumentNode } from "@graphql-typed-document-node/core";
import {
  NodeByIdDocument,
  OrganizationUsersTicketsDocument,
  UpdateWorkspaceDocument,
  type NodeByIdQuery,
  type OrganizationUsersTicketsQuery,
  type OrganizationUsersTicketsQueryVariables,
  type UpdateWorkspaceMutation,
  type UpdateWorkspaceMutationVariables,
} from "./generated";
import type { Workspace, WorkspaceProjectsConnection } from "./schema-types";

const organization: TypedDocumentNode<OrganizationUsersTicketsQuery, OrganizationUsersTicketsQueryVariables> =
  OrganizationUsersTicketsDocument;
const variables: OrganizationUsersTicketsQueryVariables = { orgName: "acme" };

export function ticketTitles(data: OrganizationUsersTicketsQuery): string[] {
  const org = data.organization;
  if (!org) return [];
  const count: number | null | undefined = org.users.totalCount;
  void count;
  return org.users.nodes.flatMap((user) => {
    const after: string | null | undefined = user.tickets.pageInfo.endCursor;
    void after;
    return user.tickets.nodes.map((ticket) => `${user.username}/${ticket.ticketId}: ${ticket.title ?? ""}`);
  });
}

export function describe(data: NodeByIdQuery): string {
  const node = data.node;
  if (!node) return "not found";
  switch (node.__typename) {
    case "User":
      return `${node.username} ${node.name ?? ""}`;
    case "Workspace":
      return `${node.displayName ?? ""} v${node.version.toFixed(0)}`;
    default:
      return node.id;
  }
}

export function outcome(data: UpdateWorkspaceMutation): string {
  const result = data.updateWorkspace;
  if (result.__typename === "Workspace") {
    const version: number = result.version;
    return `${result.workspaceId} v${version}`;
  }
  if (result.__typename === "ConflictError") {
    return `${result.reason} at ${String(result.currentVersion)}: ${result.message}`;
  }
  return result.message; // every other member implements MutationError
}

export const update: UpdateWorkspaceMutationVariables = {
  input: { workspaceId: "ws-main", expectedVersion: 1, displayName: "Renamed" },
};
// @ts-expect-error expectedVersion is required: the generated input type is not loose.
export const missing: UpdateWorkspaceMutationVariables = { input: { workspaceId: "ws-main" } };

export const documents = [organization, variables, NodeByIdDocument, UpdateWorkspaceDocument];

// The typescript plugin's types of the whole schema: ids and connections are non-null.
export function projectTitles(workspace: Workspace): string[] {
  const projects: WorkspaceProjectsConnection = workspace.projects;
  const id: string = workspace.id;
  return projects.nodes.map((project) => `${id}: ${project.title ?? ""}`);
}
