// Creates, fills and asks the task manager table through ElectroDB itself: the reference the gateway is held to.
//
//   node taskmanager.mjs ENDPOINT TABLE create          the table, as the example defines it, and our data
//   node taskmanager.mjs ENDPOINT TABLE ask 'JSON'      each [pattern, args] asked; prints answers and requests
//
// ENDPOINT and TABLE may come from TABLEGRAPH_TEST_ENDPOINT and TASKMANAGER_TABLE instead.
import { readFile } from "node:fs/promises";
import { CreateTableCommand, waitUntilTableExists } from "@aws-sdk/client-dynamodb";
import { countingClient, tableDefinition, taskManager } from "./model.mjs";

// Each access pattern as the example's page asks it, and the point reads that read writes back.
const PATTERNS = {
  workplaces: (s, { office }) => s.collections.workplaces({ office }),
  assignments: (s, { employee }) => s.collections.assignments({ employee }),
  juniorDevelopers: (s, { title, salary }) => s.entities.employee.query.roles({ title }).gt({ salary }),
  openTasks: (s, { status, project, points }) =>
    s.entities.task.query.statuses({ status, project }).where((attr, { lte }) => lte(attr.points, points)),
  recentHires: (s, { team, from, to }) =>
    s.entities.employee.query.teams({ team }).between({ dateHired: from }, { dateHired: to }),
  createTask: (s, item) => s.entities.task.put(item),
  getEmployee: (s, key) => s.entities.employee.get(key),
  getTask: (s, key) => s.entities.task.get(key),
  getOffice: (s, key) => s.entities.office.get(key),
};

async function create(service, client, table) {
  await client.send(new CreateTableCommand(tableDefinition(table)));
  await waitUntilTableExists({ client, maxWaitTime: 60 }, { TableName: table });
  const data = JSON.parse(await readFile(new URL("./data.json", import.meta.url), "utf8"));
  // As the example's loader: one batch put per entity.
  await service.entities.task.put(data.tasks).go({ concurrent: 3 });
  await service.entities.office.put(data.offices).go({ concurrent: 3 });
  await service.entities.employee.put(data.employees).go({ concurrent: 3 });
}

async function ask(service, sent, questions) {
  const answers = [];
  for (const [name, args] of questions) {
    for (const key of Object.keys(sent)) delete sent[key];
    const request = PATTERNS[name](service, args);
    const params = request.params();
    const { data } = await request.go();
    answers.push({ name, data, params, sent: { ...sent } });
  }
  return answers;
}

async function main() {
  const [endpoint = process.env.TABLEGRAPH_TEST_ENDPOINT, table = process.env.TASKMANAGER_TABLE, command, json] =
    process.argv.slice(2);
  const { client, sent } = countingClient(endpoint);
  const service = taskManager(client, table);
  if (command === "create") {
    await create(service, client, table);
  } else if (command === "ask") {
    process.stdout.write(JSON.stringify(await ask(service, sent, JSON.parse(json))));
  } else {
    throw new Error(`unknown command ${command}: expected create or ask`);
  }
}

await main();
