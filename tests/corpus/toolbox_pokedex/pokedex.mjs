// Creates, fills and asks the PokeTable through dynamodb-toolbox itself: the reference the gateway is held to.
// Usage: see ../library.mjs.
import { readFile } from "node:fs/promises";
import { CreateTableCommand, waitUntilTableExists } from "@aws-sdk/client-dynamodb";
import { DeleteItemCommand } from "dynamodb-toolbox/entity/actions/delete";
import { GetItemCommand } from "dynamodb-toolbox/entity/actions/get";
import { PutItemCommand } from "dynamodb-toolbox/entity/actions/put";
import { $add, $append, UpdateItemCommand } from "dynamodb-toolbox/entity/actions/update";
import { QueryCommand } from "dynamodb-toolbox/table/actions/query";
import { run } from "../library.mjs";
import { pokedex, tableDefinition } from "./model.mjs";

// The library's command: what it answers, and the request it sends (`.params()`).
async function sent(command, answer) {
  const params = command.params();
  const response = await command.send();
  return { data: answer(response), params };
}

const written = () => null;

// Each access pattern as the docs' pages ask it.
const patterns = {
  getPokemon: ({ PokemonEntity }, key) =>
    sent(PokemonEntity.build(GetItemCommand).key(key), ({ Item }) => Item ?? null),
  getTrainer: ({ TrainerEntity }, key) =>
    sent(TrainerEntity.build(GetItemCommand).key(key), ({ Item }) => Item ?? null),
  trainerPokemons: ({ PokeTable, PokemonEntity }, { trainerId, minLevel, reverse }) => {
    const query = { index: "byTrainerId", partition: trainerId };
    if (minLevel !== undefined) query.range = { gte: minLevel };
    const command = PokeTable.build(QueryCommand).entities(PokemonEntity).query(query).options({ reverse: !!reverse });
    return sent(command, ({ Items }) => Items);
  },
  putPokemon: ({ PokemonEntity }, pokemon) =>
    sent(PokemonEntity.build(PutItemCommand).item({ ...pokemon, pokeTypes: new Set(pokemon.pokeTypes) }), written),
  // As Getting started > KV Store evolves its pikachu: one UpdateItem, the level added to, the evolution appended
  // (the page passes $append one object; 2.10.6 refuses anything but a list: "evolutions.$APPEND should be a list").
  evolvePokemon: ({ PokemonEntity }, { pokemonId, from, to, at }) =>
    sent(
      PokemonEntity.build(UpdateItemCommand).item({
        pokemonId,
        species: to,
        level: $add(1),
        evolutions: $append([{ from, to, at }]),
      }),
      written,
    ),
  capturePokemon: ({ PokemonEntity }, { pokemonId, trainerId, captureDate }) =>
    sent(PokemonEntity.build(UpdateItemCommand).item({ pokemonId, trainerId, captureDate }), written),
  deletePokemon: ({ PokemonEntity }, key) => sent(PokemonEntity.build(DeleteItemCommand).key(key), written),
};

async function create(dex, client, table) {
  await client.send(new CreateTableCommand(tableDefinition(table)));
  await waitUntilTableExists({ client, maxWaitTime: 60 }, { TableName: table });
  const data = JSON.parse(await readFile(new URL("./data.json", import.meta.url), "utf8"));
  for (const trainer of data.trainers) await dex.TrainerEntity.build(PutItemCommand).item(trainer).send();
  for (const pokemon of data.pokemons) await patterns.putPokemon(dex, pokemon);
}

await run({ connect: pokedex, create, patterns });
