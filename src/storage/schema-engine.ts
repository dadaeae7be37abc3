// Loads Prisma's schema engine (the wasm build: no native binary on this machine) over a driver adapter.
// Used to generate migration SQL (scripts/make-migration.ts) and by tests that check migrations match
// prisma/models.prisma. Start-up applies migrations with src/storage/migrate.ts, not with this engine.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { bindMigrationAwareSqlAdapterFactory } from "@prisma/driver-adapter-utils";
import type { DiffTarget, SchemaEngine } from "@prisma/schema-engine-wasm/schema_engine_bg";

// Node has WebAssembly; the "node" types here do not declare it as a value.
declare const WebAssembly: { instantiate(bytes: Uint8Array, imports: object): Promise<{ instance: { exports: unknown } }> };

const require = createRequire(import.meta.url);

export type EngineLog = (message: string) => void;

let wasmModule: Promise<typeof import("@prisma/schema-engine-wasm/schema_engine_bg")> | undefined;

/** Instantiates the wasm once per process; a second instantiation would replace the first one's memory. */
async function schemaEngineModule() {
  wasmModule ??= (async () => {
    const bgPath = require.resolve("@prisma/schema-engine-wasm/schema_engine_bg");
    const bg = (await import(bgPath)) as typeof import("@prisma/schema-engine-wasm/schema_engine_bg") & {
      __wbg_set_wasm(w: unknown): void;
    };
    const bytes = await readFile(bgPath.replace(/schema_engine_bg\.js$/, "schema_engine_bg.wasm"));
    const { instance } = await WebAssembly.instantiate(bytes, { "./schema_engine_bg.js": bg as never });
    bg.__wbg_set_wasm(instance.exports);
    (instance.exports as { __wbindgen_start(): void }).__wbindgen_start();
    // The engine reports a Rust panic's message through this global before throwing.
    const g = globalThis as { PRISMA_WASM_PANIC_REGISTRY?: { set_message(m: string): void } };
    g.PRISMA_WASM_PANIC_REGISTRY ??= { set_message: (m: string) => console.error(`schema engine panic: ${m}`) };
    return bg;
  })();
  return wasmModule;
}

export async function loadSchemaEngine(
  adapterFactory: Parameters<typeof bindMigrationAwareSqlAdapterFactory>[0],
  log: EngineLog = () => {},
): Promise<SchemaEngine> {
  const bg = await schemaEngineModule();
  return bg.SchemaEngine.new({ datamodels: undefined }, log, bindMigrationAwareSqlAdapterFactory(adapterFactory));
}

/** The SQL that takes a database from one datamodel (or nothing) to another. */
export async function diffDatamodels(engine: SchemaEngine, from: string | null, to: string): Promise<string> {
  const target = (content: string | null): DiffTarget =>
    content === null ? { tag: "empty" } : { tag: "schemaDatamodel", files: [{ path: "schema.prisma", content }] };
  const result = await engine.diff({
    from: target(from),
    to: target(to),
    script: true,
    exitCode: null,
    filters: { externalTables: [], externalEnums: [] },
  });
  return result.stdout ?? "";
}
