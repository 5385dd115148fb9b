// dynamodb-toolbox's PokeTable (https://www.dynamodbtoolbox.com/docs): pokemons and trainers in one table, as its
// pages declare them: the table and its byTrainerId index (Table > Usage), computed keys (Entity > Usage), the
// pokemon's schema (Getting started > KV Store) and its trainer (Getting started > Usage).
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { Entity } from "dynamodb-toolbox/entity";
import { Table } from "dynamodb-toolbox/table";
import { boolean } from "dynamodb-toolbox/schema/boolean";
import { item } from "dynamodb-toolbox/schema/item";
import { list } from "dynamodb-toolbox/schema/list";
import { map } from "dynamodb-toolbox/schema/map";
import { number } from "dynamodb-toolbox/schema/number";
import { set } from "dynamodb-toolbox/schema/set";
import { string } from "dynamodb-toolbox/schema/string";

// DynamoDB-Toolbox deploys nothing: the table is created as its Table describes it, projection ALL.
export function tableDefinition(tableName) {
  return {
    TableName: tableName,
    KeySchema: [
      { AttributeName: "PK", KeyType: "HASH" },
      { AttributeName: "SK", KeyType: "RANGE" },
    ],
    AttributeDefinitions: [
      { AttributeName: "PK", AttributeType: "S" },
      { AttributeName: "SK", AttributeType: "S" },
      { AttributeName: "trainerId", AttributeType: "S" },
      { AttributeName: "level", AttributeType: "N" },
    ],
    GlobalSecondaryIndexes: [
      {
        IndexName: "byTrainerId",
        KeySchema: [
          { AttributeName: "trainerId", KeyType: "HASH" },
          { AttributeName: "level", KeyType: "RANGE" },
        ],
        Projection: { ProjectionType: "ALL" },
      },
    ],
    BillingMode: "PAY_PER_REQUEST",
  };
}

export function pokedex(client, name) {
  const PokeTable = new Table({
    name,
    partitionKey: { name: "PK", type: "string" },
    sortKey: { name: "SK", type: "string" },
    indexes: {
      byTrainerId: {
        type: "global",
        partitionKey: { name: "trainerId", type: "string" },
        sortKey: { name: "level", type: "number" },
      },
    },
    documentClient: DynamoDBDocumentClient.from(client),
  });
  const PokemonEntity = new Entity({
    name: "POKEMON",
    table: PokeTable,
    schema: item({
      pokemonId: string().key(),
      species: string().enum("pikachu", "raichu", "charizard", "bulbasaur", "squirtle", "eevee", "mewtwo"),
      level: number(),
      customName: string().optional(),
      isLegendary: boolean().optional(),
      pokeTypes: set(string()),
      evolutions: list(map({ from: string(), to: string(), at: string() })).default([]),
      // In byTrainerId only once captured (Getting started > Scans & Queries).
      trainerId: string().optional(),
      captureDate: string().optional(),
    }),
    computeKey: ({ pokemonId }) => ({ PK: `POKEMON#${pokemonId}`, SK: "POKEMON" }),
  });
  const TrainerEntity = new Entity({
    name: "TRAINER",
    table: PokeTable,
    schema: item({
      trainerId: string().key(),
      name: string(),
      hairStyle: string().optional(),
      city: string().optional(),
    }),
    computeKey: ({ trainerId }) => ({ PK: `TRAINER#${trainerId}`, SK: "TRAINER" }),
  });
  return { PokeTable, PokemonEntity, TrainerEntity };
}
