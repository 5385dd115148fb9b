// Apollo Client 3 (InMemoryCache, normalising) in Node against live gateways; prints what it saw as JSON.
// argv: <contract gateway url> <fresh gateway url> <possible-types.json> <workspaceId on the fresh table>
const fs = require("fs");
const { ApolloClient, HttpLink, InMemoryCache, gql } = require("@apollo/client/core");
const { relayStylePagination } = require("@apollo/client/utilities");

const [contractUrl, freshUrl, possibleTypesFile, workspaceId] = process.argv.slice(2);
const { possibleTypes } = JSON.parse(fs.readFileSync(possibleTypesFile, "utf8"));

function client(url) {
  const sent = [];
  const counting = (uri, options) => {
    sent.push(JSON.parse(options.body).operationName);
    return fetch(uri, options);
  };
  const cache = new InMemoryCache({
    possibleTypes,
    // Keyed as docs/graphql.md says: pages merge only within one order and one filter.
    typePolicies: { Workspace: { fields: { projects: relayStylePagination(["order", "where"]) } } },
  });
  const apollo = new ApolloClient({ link: new HttpLink({ uri: `${url}/graphql`, fetch: counting }), cache });
  return { apollo, cache, sent };
}

const PROJECTS = gql`
  query Projects($after: String) {
    workspace(workspaceId: "ws-main") {
      id
      workspaceId
      projects(first: 4, after: $after) {
        totalCount
        edges { cursor node { id projectId title } }
        pageInfo { hasNextPage endCursor }
      }
    }
  }
`;
const PROJECTS_BACK = gql`
  query ProjectsBack($before: String) {
    workspace(workspaceId: "ws-main") {
      id
      projects(last: 4, before: $before) {
        edges { cursor node { id projectId } }
        pageInfo { hasPreviousPage startCursor }
      }
    }
  }
`;
const ORGANIZATION = gql`
  query Organization {
    organization(orgName: "o1") {
      id
      name
      users(first: 3) {
        nodes { id username tickets(first: 2) { nodes { id ticketId title } pageInfo { hasNextPage endCursor } } }
      }
    }
  }
`;
const NODE = gql`
  query Node($id: ID!) {
    node(id: $id) { id ... on User { name } ... on Workspace { displayName } }
  }
`;
const WORKSPACE = gql`
  query Workspace($workspaceId: ID!) { workspace(workspaceId: $workspaceId) { id workspaceId displayName version } }
`;
const UPDATE = gql`
  mutation UpdateWorkspace($input: UpdateWorkspaceInput!) {
    updateWorkspace(input: $input) {
      __typename
      ... on Workspace { id workspaceId displayName version }
      ... on ConflictError { reason currentVersion }
      ... on MutationError { message }
    }
  }
`;

// Objects carrying an id that sit inside another record instead of being a reference: not normalised.
function embedded(value, where, found) {
  if (Array.isArray(value)) {
    value.forEach((item, i) => embedded(item, `${where}.${i}`, found));
  } else if (value && typeof value === "object" && !("__ref" in value)) {
    if ("id" in value) found.push(where);
    for (const [key, inner] of Object.entries(value)) embedded(inner, `${where}.${key}`, found);
  }
}

(async () => {
  const out = {};
  const read = client(contractUrl);

  // Pagination: first page, then fetchMore after its endCursor; the type policy merges both into one list.
  const first = await read.apollo.query({ query: PROJECTS });
  const page1 = first.data.workspace.projects;
  out.page1 = page1.edges.map((edge) => edge.node.projectId);
  const observable = read.apollo.watchQuery({ query: PROJECTS });
  await observable.result();
  await observable.fetchMore({ variables: { after: page1.pageInfo.endCursor } });
  const merged = read.apollo.readQuery({ query: PROJECTS }).workspace.projects;
  out.merged = merged.edges.map((edge) => edge.node.projectId);
  out.mergedHasNextPage = merged.pageInfo.hasNextPage;
  out.mergedEndCursor = merged.pageInfo.endCursor;
  out.totalCount = merged.totalCount;
  // The second page as the server answers it, without the cache, to compare.
  const direct = await fetch(`${contractUrl}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      query: PROJECTS.loc.source.body,
      variables: { after: page1.pageInfo.endCursor },
    }),
  }).then((response) => response.json());
  out.page2 = direct.data.workspace.projects.edges.map((edge) => edge.node.projectId);
  out.page2EndCursor = direct.data.workspace.projects.pageInfo.endCursor;

  // Backwards: the last page, then fetchMore before its startCursor; the policy puts the earlier page in front.
  const back = client(contractUrl);
  const last = await back.apollo.query({ query: PROJECTS_BACK });
  const backwards = back.apollo.watchQuery({ query: PROJECTS_BACK });
  await backwards.result();
  await backwards.fetchMore({ variables: { before: last.data.workspace.projects.pageInfo.startCursor } });
  const backMerged = back.apollo.readQuery({ query: PROJECTS_BACK }).workspace.projects;
  out.backMerged = backMerged.edges.map((edge) => edge.node.projectId);
  out.backHasPreviousPage = backMerged.pageInfo.hasPreviousPage;

  // Normalisation: the docs' organization query and node(id:) with fragments on two types.
  const org = await read.apollo.query({ query: ORGANIZATION });
  const someUser = org.data.organization.users.nodes[0];
  const asNode = await read.apollo.query({ query: NODE, variables: { id: someUser.id } });
  out.nodeTypename = asNode.data.node.__typename;
  const wsNode = await read.apollo.query({ query: NODE, variables: { id: first.data.workspace.id } });
  out.workspaceNode = wsNode.data.node;
  const extracted = read.cache.extract();
  out.keys = Object.keys(extracted);
  out.records = Object.fromEntries(
    Object.entries(extracted).map(([key, record]) => [key, { __typename: record.__typename, id: record.id }]),
  );
  const found = [];
  for (const [key, record] of Object.entries(extracted)) {
    for (const [field, value] of Object.entries(record)) {
      if (field !== "__typename" && field !== "id") embedded(value, `${key}.${field}`, found);
    }
  }
  out.embedded = found;
  out.readRequests = read.sent;

  // A mutation's result updates the cached entity, without a refetch.
  const write = client(freshUrl);
  const before = await write.apollo.query({ query: WORKSPACE, variables: { workspaceId } });
  out.before = before.data.workspace;
  const watched = [];
  const subscription = write.apollo
    .watchQuery({ query: WORKSPACE, variables: { workspaceId }, fetchPolicy: "cache-only" })
    .subscribe(({ data }) => watched.push(data.workspace.displayName));
  const changed = await write.apollo.mutate({
    mutation: UPDATE,
    variables: { input: { workspaceId, expectedVersion: before.data.workspace.version, displayName: "Renamed by Apollo" } },
  });
  out.mutation = changed.data.updateWorkspace;
  await new Promise((resolve) => setTimeout(resolve, 50));
  subscription.unsubscribe();
  out.after = write.apollo.readQuery({ query: WORKSPACE, variables: { workspaceId } }).workspace;
  out.watched = watched;
  out.writeRequests = write.sent;

  process.stdout.write(JSON.stringify(out));
})().catch((error) => {
  process.stderr.write(String(error && error.stack ? error.stack : error) + "\n");
  process.exit(1);
});
