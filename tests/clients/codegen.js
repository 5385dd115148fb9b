// graphql-codegen's configuration; the test names the generated files in TABLEGRAPH_CODEGEN_OUT (the operations'
// types and typed documents: typescript-operations 6 emits the enums and inputs they use itself, so the typescript
// plugin, which would emit them again, writes the whole schema's types to its own file, TABLEGRAPH_CODEGEN_SCHEMA_OUT).
const path = require("path");

module.exports = {
  schema: path.join(__dirname, "..", "..", "schema", "schema.graphql"),
  documents: path.join(__dirname, "operations.graphql"),
  generates: {
    [process.env.TABLEGRAPH_CODEGEN_OUT]: {
      plugins: ["typescript-operations", "typed-document-node"],
      config: { strictScalars: true, scalars: { Date: "string" }, useTypeImports: true },
    },
    [process.env.TABLEGRAPH_CODEGEN_SCHEMA_OUT]: {
      plugins: ["typescript"],
      config: { strictScalars: true, scalars: { Date: "string" }, useTypeImports: true },
    },
  },
};
