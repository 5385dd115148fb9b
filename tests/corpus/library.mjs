// What every corpus design's Node script shares: a counting client, and the command line the Python tests call.
//
//   node <design>.mjs ENDPOINT TABLE create          the table, as its authors create it, and our data
//   node <design>.mjs ENDPOINT TABLE ask 'JSON'      each [pattern, args] asked; prints answers and requests
import { DynamoDBClient } from "@aws-sdk/client-dynamodb";

// A client of the endpoint whose every request is counted by operation, to compare with the gateway's wire.
export function countingClient(endpoint) {
  const client = new DynamoDBClient({
    endpoint,
    region: "us-east-1",
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
  });
  const sent = {};
  client.middlewareStack.add(
    (next, context) => async (args) => {
      sent[context.commandName] = (sent[context.commandName] ?? 0) + 1;
      return next(args);
    },
    { step: "initialize", name: "countRequests" },
  );
  return { client, sent };
}

// Sets travel as lists in JSON; answers print them sorted, as the gateway serves a set.
function plain(value) {
  if (value instanceof Set) return [...value].sort();
  if (Array.isArray(value)) return value.map(plain);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, field]) => [key, plain(field)]));
  }
  return value;
}

// Each pattern answers `{data, params?}`; a pattern the library throws on answers its error's code instead.
async function ask(model, sent, patterns, questions) {
  const answers = [];
  for (const [name, args] of questions) {
    for (const key of Object.keys(sent)) delete sent[key];
    try {
      const { data, params } = await patterns[name](model, args);
      answers.push({ name, data: plain(data), params, sent: { ...sent } });
    } catch (error) {
      answers.push({ name, error: error.code ?? error.message, sent: { ...sent } });
    }
  }
  return answers;
}

// `connect(client, table)` builds the library's model; `create(model, client, table)` makes and fills the table.
export async function run({ connect, create, patterns }) {
  const [endpoint, table, command, json] = process.argv.slice(2);
  const { client, sent } = countingClient(endpoint);
  const model = connect(client, table);
  if (command === "create") {
    await create(model, client, table);
  } else if (command === "ask") {
    process.stdout.write(JSON.stringify(await ask(model, sent, patterns, JSON.parse(json))));
  } else {
    throw new Error(`unknown command ${command}: expected create or ask`);
  }
}
