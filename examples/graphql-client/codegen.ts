// graphql-codegen's configuration: typed documents (client preset) for the operations in operations/,
// checked against Weft's schema (../../schema.graphql), written to src/gql/. persistedDocuments writes
// src/gql/persisted-documents.json ({sha256: text}), which Weft reads as an allow-list manifest
// (graphql.persisted_queries.manifest) and whose hashes the client sends as APQ's sha256Hash.
import type { CodegenConfig } from "@graphql-codegen/cli";

const config: CodegenConfig = {
  schema: "../../schema.graphql",
  documents: ["operations/**/*.graphql"],
  ignoreNoDocuments: false,
  generates: {
    "src/gql/": {
      preset: "client",
      presetConfig: { fragmentMasking: false, persistedDocuments: { hashAlgorithm: "sha256" } },
      config: {
        scalars: { Timestamp: "number", JSON: "unknown", JSONObject: "Record<string, unknown>" },
        enumsAsTypes: true,
        useTypeImports: true,
      },
    },
  },
};
export default config;
