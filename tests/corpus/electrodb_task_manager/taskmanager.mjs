// Creates, fills and asks the task manager table through ElectroDB itself: the reference the gateway is held to.
// Usage: see ../library.mjs.
import { readFile } from "node:fs/promises";
import { CreateTableCommand, waitUntilTableExists } from "@aws-sdk/client-dynamodb";
import { run } from "../library.mjs";
import { tableDefinition, taskManager } from "./model.mjs";

// ElectroDB's request: its answer, and the request it sends (`.params()`).
async function asked(request) {
  const params = request.params();
  const { data } = await request.go();
  return { data, params };
}

// Each access pattern as the example's page asks it, and the point reads that read writes back.
const patterns = {
  workplaces: (s, { office }) => asked(s.collections.workplaces({ office })),
  assignments: (s, { employee }) => asked(s.collections.assignments({ employee })),
  juniorDevelopers: (s, { title, salary }) => asked(s.entities.employee.query.roles({ title }).gt({ salary })),
  openTasks: (s, { status, project, points }) =>
    asked(s.entities.task.query.statuses({ status, project }).where((attr, { lte }) => lte(attr.points, points))),
  recentHires: (s, { team, from, to }) =>
    asked(s.entities.employee.query.teams({ team }).between({ dateHired: from }, { dateHired: to })),
  createTask: (s, item) => asked(s.entities.task.put(item)),
  // A task's life cycle: one UpdateItem, which rewrites the three GSI keys that hold its status.
  setTaskStatus: (s, { status, ...key }) => asked(s.entities.task.update(key).set({ status })),
  deleteTask: (s, key) => asked(s.entities.task.delete(key)),
  getEmployee: (s, key) => asked(s.entities.employee.get(key)),
  getTask: (s, key) => asked(s.entities.task.get(key)),
  getOffice: (s, key) => asked(s.entities.office.get(key)),
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

await run({ connect: taskManager, create, patterns });
