// The typed client of examples/graphql-client (graphql-codegen's client preset over schema.graphql):
// its committed generated files are what graphql-codegen makes of the current schema and operations now
// (regenerated in a scratch copy and compared byte for byte), and its script runs against a real server
// on SQLite and PostgreSQL over graphql-ws only — log in, create a room, a message sent and received
// live, the room list — also on a server that runs only the operations of the example's
// persisted-documents.json (graphql.persisted_queries.only_registered with it as the manifest).
// graphql-codegen is installed in examples/graphql-client/node_modules (its own package.json; .ci/run
// installs it), not in Weft's own dependencies.
import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, startTestServer, type TestServer } from "../helpers/server.ts";
import { registerUser } from "../helpers/users.ts";

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const EXAMPLE = path.join(ROOT, "examples/graphql-client");
const GENERATED = path.join(EXAMPLE, "src/gql");

describe("examples/graphql-client's generated code", () => {
  it("is what graphql-codegen makes of the current schema.graphql and operations", async () => {
    const scratch = mkdtempSync(path.join(tmpdir(), "weft-codegen-"));
    try {
      const copy = path.join(scratch, "examples/graphql-client");
      cpSync(path.join(EXAMPLE, "codegen.ts"), path.join(copy, "codegen.ts"));
      cpSync(path.join(EXAMPLE, "package.json"), path.join(copy, "package.json"));
      cpSync(path.join(EXAMPLE, "operations"), path.join(copy, "operations"), { recursive: true });
      cpSync(path.join(ROOT, "schema.graphql"), path.join(scratch, "schema.graphql"));
      symlinkSync(path.join(EXAMPLE, "node_modules"), path.join(copy, "node_modules"));
      await run(process.execPath, [path.join(EXAMPLE, "node_modules/@graphql-codegen/cli/esm/bin.js"), "--config", "codegen.ts"], { cwd: copy, timeout: 120_000 });
      const fresh = path.join(copy, "src/gql");
      const names = readdirSync(GENERATED).sort();
      expect(readdirSync(fresh).sort()).toEqual(names);
      expect(names).toContain("graphql.ts");
      for (const name of names) expect(readFileSync(path.join(fresh, name), "utf8"), `${name}: run \`npm run codegen\` in examples/graphql-client`).toBe(readFileSync(path.join(GENERATED, name), "utf8"));
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }, 180_000);

  it("type-checks with the example's script (tsc over src/)", async () => {
    await run(process.execPath, [path.join(ROOT, "node_modules/typescript/bin/tsc"), "-p", EXAMPLE], { cwd: EXAMPLE, timeout: 120_000 });
  }, 180_000);
});

async function runExample(t: TestServer, user: string): Promise<any> {
  const { stdout } = await run(process.execPath, ["src/main.ts"], {
    cwd: EXAMPLE,
    timeout: 60_000,
    env: { ...process.env, WEFT_URL: t.baseUrl, WEFT_USER: user, WEFT_PASSWORD: "password", NODE_NO_WARNINGS: "1" },
  });
  return JSON.parse(stdout.trim().split("\n").pop()!);
}

describe.each(backends())("the example client against a server on %s", (backend) => {
  let open: TestServer;
  let listed: TestServer;
  beforeAll(async () => {
    open = await startTestServer({ backend });
    listed = await startTestServer({ backend, config: { graphql: { persisted_queries: { only_registered: true, manifest: path.join(GENERATED, "persisted-documents.json") } } } });
    await registerUser(open, "typed");
    await registerUser(listed, "typed");
  });
  afterAll(async () => {
    await open?.close();
    await listed?.close();
  });

  for (const which of ["open", "listed"] as const) {
    it(`logs in, sends and receives live, lists rooms over graphql-ws only (${which === "open" ? "APQ registering each operation" : "only the manifest's operations allowed"})`, async () => {
      const t = which === "open" ? open : listed;
      const out = await runExample(t, "typed");
      expect(out.userId).toBe("@typed:weft.test");
      expect(out.roomId).toMatch(/^!/);
      expect(out.sentEventId).toMatch(/^\$/);
      expect(out.receivedEventId).toBe(out.sentEventId);
      expect(out.roomList).toEqual({ name: "Typed client", members: 1, lastBody: expect.stringMatching(/^hello from the typed client \d+$/) });
      // What the script ran is now known by hash: registered by APQ (login, createRoom, the room's position,
      // sendMessage, the room list), or known all along (the manifest, and nothing registered beside it).
      const known = t.hs.services.processState.persistedQueries!;
      if (which === "open") expect([known.cache.size, known.registered.size]).toEqual([5, 0]);
      else expect([known.cache.size, known.registered.size]).toEqual([0, Object.keys(JSON.parse(readFileSync(path.join(GENERATED, "persisted-documents.json"), "utf8"))).length]);
    }, 90_000);
  }

  it("an operation outside the manifest is refused there", async () => {
    const r = await listed.call("POST", "/graphql", { body: { query: "{ loginFlows { type } }" } });
    expect(r.json.errors?.[0]?.extensions?.code).toBe("PERSISTED_QUERY_NOT_IN_LIST");
  });
});
