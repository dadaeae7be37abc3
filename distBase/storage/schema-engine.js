var __rewriteRelativeImportExtension = (this && this.__rewriteRelativeImportExtension) || function (path, preserveJsx) {
    if (typeof path === "string" && /^\.\.?\//.test(path)) {
        return path.replace(/\.(tsx)$|((?:\.d)?)((?:\.[^./]+?)?)\.([cm]?)ts$/i, function (m, tsx, d, ext, cm) {
            return tsx ? preserveJsx ? ".jsx" : ".js" : d && (!ext || !cm) ? m : (d + ext + "." + cm.toLowerCase() + "js");
        });
    }
    return path;
};
// Loads Prisma's schema engine (the wasm build: no native binary on this machine) over a driver adapter.
// Used to generate migration SQL (scripts/make-migration.ts) and by tests that check migrations match
// prisma/models.prisma. Start-up applies migrations with src/storage/migrate.ts, not with this engine.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { bindMigrationAwareSqlAdapterFactory } from "@prisma/driver-adapter-utils";
const require = createRequire(import.meta.url);
let wasmModule;
/** Instantiates the wasm once per process; a second instantiation would replace the first one's memory. */
async function schemaEngineModule() {
    wasmModule ??= (async () => {
        const bgPath = require.resolve("@prisma/schema-engine-wasm/schema_engine_bg");
        const bg = (await import(__rewriteRelativeImportExtension(bgPath)));
        const bytes = await readFile(bgPath.replace(/schema_engine_bg\.js$/, "schema_engine_bg.wasm"));
        const { instance } = await WebAssembly.instantiate(bytes, { "./schema_engine_bg.js": bg });
        bg.__wbg_set_wasm(instance.exports);
        instance.exports.__wbindgen_start();
        // The engine reports a Rust panic's message through this global before throwing.
        const g = globalThis;
        g.PRISMA_WASM_PANIC_REGISTRY ??= { set_message: (m) => console.error(`schema engine panic: ${m}`) };
        return bg;
    })();
    return wasmModule;
}
export async function loadSchemaEngine(adapterFactory, log = () => { }) {
    const bg = await schemaEngineModule();
    return bg.SchemaEngine.new({ datamodels: undefined }, log, bindMigrationAwareSqlAdapterFactory(adapterFactory));
}
/** The SQL that takes a database from one datamodel (or nothing) to another. */
export async function diffDatamodels(engine, from, to) {
    const target = (content) => content === null ? { tag: "empty" } : { tag: "schemaDatamodel", files: [{ path: "schema.prisma", content }] };
    const result = await engine.diff({
        from: target(from),
        to: target(to),
        script: true,
        exitCode: null,
        filters: { externalTables: [], externalEnums: [] },
    });
    return result.stdout ?? "";
}
