// urql with Graphcache (normalising, schema-aware from the gateway's introspection) in Node against a live
// gateway: runs each operation, then reads it again from the cache alone; prints the answers and every warning.
// argv: <gateway url> <introspection.json> <operations.json: a list of query texts>
const fs = require("fs");
const { Client, fetchExchange } = require("@urql/core");
const { cacheExchange } = require("@urql/exchange-graphcache");

const [url, schemaFile, operationsFile] = process.argv.slice(2);
const schema = JSON.parse(fs.readFileSync(schemaFile, "utf8"));
const operations = JSON.parse(fs.readFileSync(operationsFile, "utf8"));
const warnings = [];
console.warn = (...args) => warnings.push(args.map(String).join(" "));
// toPromise() unsubscribes at the first result, and urql then aborts the request's fetch, whose body may still be
// being read: that abort rejects a promise nobody awaits. It is the teardown of a finished request, not a failure.
process.on("unhandledRejection", (reason) => {
  if (reason && reason.name === "AbortError") return;
  throw reason;
});

(async () => {
  const client = new Client({ url: `${url}/graphql`, exchanges: [cacheExchange({ schema }), fetchExchange] });
  const answers = [];
  for (const text of operations) {
    const fetched = await client.query(text, {}).toPromise();
    const cached = await client.query(text, {}, { requestPolicy: "cache-only" }).toPromise();
    answers.push({
      error: fetched.error ? String(fetched.error) : null,
      fetched: fetched.data ?? null,
      cached: cached.data ?? null,
    });
  }
  process.stdout.write(JSON.stringify({ warnings, answers }));
})();
