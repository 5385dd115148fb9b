// Apollo Client 3's InMemoryCache (possibleTypes from `export-schema`) in Node against a live gateway: runs each
// operation from the network, then reads it again from the cache alone, and all of them again at the end; prints the
// answers and every message the cache logs (data lost on a replaced field, a missing field), which Apollo writes with
// console.warn and console.error.
// argv: <gateway url> <possible-types.json> <operations.json: a list of query texts> [introspection.json]
// With the introspection, every connection field gets the type policy docs/graphql.md gives Apollo users.
const fs = require("fs");
const { format } = require("util");
const { ApolloClient, HttpLink, InMemoryCache, gql } = require("@apollo/client/core");
const { relayStylePagination } = require("@apollo/client/utilities");
const { loadDevMessages, loadErrorMessages } = require("@apollo/client/dev");

const [url, possibleTypesFile, operationsFile, introspectionFile] = process.argv.slice(2);
const { possibleTypes } = JSON.parse(fs.readFileSync(possibleTypesFile, "utf8"));
const operations = JSON.parse(fs.readFileSync(operationsFile, "utf8"));
const messages = [];
for (const level of ["warn", "error"]) {
  console[level] = (...args) => messages.push(format(...args));
}
// Apollo ships its messages' text apart: without these it logs a link instead of the sentence.
loadDevMessages();
loadErrorMessages();

// A connection's page is not an entity: its pages merge under the arguments that choose the list (`order`,
// `where`), never under the cursor arguments, which relayStylePagination reads itself.
function connectionPolicies(introspection) {
  const policies = {};
  for (const type of introspection.__schema.types) {
    if (type.kind !== "OBJECT" || type.name.startsWith("__")) continue;
    for (const field of type.fields) {
      let of = field.type;
      while (of.ofType) of = of.ofType;
      if (!of.name.endsWith("Connection")) continue;
      const keyArgs = field.args.map((arg) => arg.name).filter((name) => !["first", "after", "last", "before"].includes(name));
      policies[type.name] ??= { fields: {} };
      policies[type.name].fields[field.name] = relayStylePagination(keyArgs.length ? keyArgs : false);
    }
  }
  return policies;
}

(async () => {
  const typePolicies = introspectionFile ? connectionPolicies(JSON.parse(fs.readFileSync(introspectionFile, "utf8"))) : {};
  const cache = new InMemoryCache({ possibleTypes, typePolicies });
  const apollo = new ApolloClient({ link: new HttpLink({ uri: `${url}/graphql` }), cache });
  const answers = [];
  for (const text of operations) {
    const query = gql(text);
    const fetched = await apollo.query({ query, fetchPolicy: "network-only", errorPolicy: "all" });
    const cached = apollo.readQuery({ query });
    answers.push({
      errors: (fetched.errors ?? []).map(String),
      fetched: fetched.data ?? null,
      cached: cached ?? null,
    });
  }
  // Each operation read again once all have run: what later answers left of it in the cache.
  const reread = operations.map((text) => apollo.readQuery({ query: gql(text) }) ?? null);
  process.stdout.write(JSON.stringify({ messages, answers, reread }));
})().catch((error) => {
  process.stderr.write(String(error && error.stack ? error.stack : error) + "\n");
  process.exit(1);
});
