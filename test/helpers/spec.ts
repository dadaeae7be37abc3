// Checks real responses against the Matrix specification's OpenAPI definitions (shared/matrix-spec/data):
// indexes every operation once per process, dereferences and compiles a response schema with ajv 2020
// only when a test first needs it, and throws an assertion error listing ajv's errors and the body.
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { AssertionError } from "node:assert";
import YAML from "yaml";
import Ajv2020Module from "ajv/dist/2020.js";
import type { ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";

/** The APIs indexed (every top-level OpenAPI file of each folder under data/api). */
export const SPEC_APIS = ["client-server", "server-server", "application-service", "identity", "push-gateway"] as const;
export type SpecApi = (typeof SPEC_APIS)[number];

const METHODS = ["get", "put", "post", "delete", "patch", "head", "options"] as const;
/** Keys that hold examples or prose only: not walked when dereferencing (they never affect validation). */
const SKIP_KEYS = new Set(["example", "examples", "description", "summary"]);

/** Schema keywords whose value maps names to schemas. */
const NAME_MAPS = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]);

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** The folder holding the spec's `data/` (env WEFT_SPEC_DIR, else `shared/matrix-spec` beside the repo). */
export function specDir(): string {
  return process.env.WEFT_SPEC_DIR ?? path.resolve(REPO_ROOT, "../shared/matrix-spec");
}

/**
 * YAML parser: js-yaml 4 when present (already in the tree through json-schema-ref-parser; ~8x faster
 * on a cold start: ~0.1 s for all files against ~0.9 s), else the `yaml` package. Both read YAML 1.2.
 */
const parseYaml: (text: string) => unknown = (() => {
  try {
    const jsyaml = createRequire(import.meta.url)("js-yaml") as { load(text: string): unknown };
    return (text: string) => jsyaml.load(text);
  } catch {
    return (text: string) => YAML.parse(text);
  }
})();

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type JsonObject = { [k: string]: Json };

interface Operation {
  api: SpecApi;
  /** Absolute path of the OpenAPI file. */
  file: string;
  method: string;
  /** Full path template, e.g. /_matrix/client/v3/profile/{userId}. */
  template: string;
  operationId: string | undefined;
  regex: RegExp;
  /** Literal characters in the template: a more literal template wins when two match. */
  literal: number;
  /** The operation object as parsed (not yet dereferenced). */
  raw: JsonObject;
}

interface Index {
  operations: Operation[];
  loadMs: number;
}

let index: Index | undefined;
const files = new Map<string, Json>();
const derefByRef = new Map<string, Json>();
const derefByNode = new WeakMap<object, Json>();
const inProgress = new Set<string>();
const validators = new Map<string, { validate: ValidateFunction; statusKey: string }>();
let ajv: InstanceType<typeof Ajv2020Module.default> | undefined;

function loadFile(abs: string): Json {
  let doc = files.get(abs);
  if (doc === undefined) {
    const text = readFileSync(abs, "utf8");
    doc = (abs.endsWith(".json") ? JSON.parse(text) : parseYaml(text)) as Json;
    files.set(abs, doc);
  }
  return doc;
}

function pointer(doc: Json, ptr: string, where: string): Json {
  if (ptr === "" || ptr === "/") return doc;
  let node: Json = doc;
  for (const part of ptr.replace(/^\//, "").split("/")) {
    const key = decodeURIComponent(part).replace(/~1/g, "/").replace(/~0/g, "~");
    if (node === null || typeof node !== "object" || !(key in node)) throw new Error(`spec: cannot resolve $ref ${where}`);
    node = (node as Record<string, Json>)[key]!;
  }
  return node;
}

function resolveRef(ref: string, file: string): Json {
  const hash = ref.indexOf("#");
  const target = hash === 0 ? file : path.resolve(path.dirname(file), hash < 0 ? ref : ref.slice(0, hash));
  const ptr = hash < 0 ? "" : ref.slice(hash + 1);
  const key = `${target}#${ptr}`;
  const done = derefByRef.get(key);
  if (done !== undefined) return done;
  if (inProgress.has(key)) throw new Error(`spec: circular $ref ${key} (not supported by this helper)`);
  inProgress.add(key);
  try {
    const out = deref(pointer(loadFile(target), ptr, key), target);
    derefByRef.set(key, out);
    return out;
  } finally {
    inProgress.delete(key);
  }
}

/**
 * Replaces every $ref (relative file paths and JSON pointers) with its target, sharing one object per
 * target. A $ref with sibling keywords keeps both (JSON Schema 2020 semantics) through `allOf`.
 */
function deref(node: Json, file: string, nameMap = false): Json {
  if (node === null || typeof node !== "object") return node;
  const memo = derefByNode.get(node);
  if (memo !== undefined) return memo;
  let out: Json;
  if (Array.isArray(node)) {
    out = node.map((n) => deref(n, file));
  } else if (!nameMap && typeof node.$ref === "string") {
    const target = resolveRef(node.$ref, file);
    const siblings = Object.keys(node).filter((k) => k !== "$ref" && !SKIP_KEYS.has(k) && k !== "title" && !k.startsWith("x-"));
    if (siblings.length === 0) {
      out = target;
    } else {
      const rest: JsonObject = {};
      for (const k of siblings) rest[k] = deref(node[k]!, file);
      const allOf = Array.isArray(rest.allOf) ? rest.allOf : [];
      out = { ...rest, allOf: [...allOf, target] };
    }
  } else {
    const o: JsonObject = {};
    // In a name map (`properties` ...) keys are property names, not keywords: walk every value.
    for (const [k, v] of Object.entries(node)) o[k] = !nameMap && SKIP_KEYS.has(k) ? v : deref(v, file, !nameMap && NAME_MAPS.has(k));
    out = o;
  }
  derefByNode.set(node, out);
  return out;
}

function templateRegex(template: string): RegExp {
  const parts = template.split(/(\{[^}]+\})/).map((p) =>
    // One URL-encoded segment (empty allowed: e.g. an empty state key).
    p.startsWith("{") ? "[^/]*" : p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"),
  );
  return new RegExp(`^${parts.join("")}$`);
}

function buildIndex(): Index {
  const started = performance.now();
  const root = path.join(specDir(), "data/api");
  const operations: Operation[] = [];
  for (const api of SPEC_APIS) {
    const dir = path.join(root, api);
    for (const name of readdirSync(dir).sort()) {
      if (!name.endsWith(".yaml")) continue;
      const file = path.join(dir, name);
      const doc = loadFile(file) as JsonObject;
      const server = (doc.servers as JsonObject[] | undefined)?.[0];
      const basePath = ((server?.variables as JsonObject | undefined)?.basePath as JsonObject | undefined)?.default;
      if (typeof basePath !== "string") throw new Error(`spec: ${file} has no servers[0].variables.basePath.default`);
      for (const [p, item] of Object.entries((doc.paths ?? {}) as JsonObject)) {
        for (const method of METHODS) {
          const raw = (item as JsonObject)[method];
          if (!raw || typeof raw !== "object" || Array.isArray(raw)) continue;
          const template = basePath + p;
          operations.push({
            api, file, method: method.toUpperCase(), template,
            operationId: typeof raw.operationId === "string" ? raw.operationId : undefined,
            regex: templateRegex(template),
            literal: template.replace(/\{[^}]+\}/g, "").length,
            raw,
          });
        }
      }
    }
  }
  return { operations, loadMs: performance.now() - started };
}

function getIndex(): Index {
  index ??= buildIndex();
  return index;
}

/** How many operations are indexed (all of them, or one API's). */
export function operationCount(api?: SpecApi): number {
  const ops = getIndex().operations;
  return api ? ops.filter((o) => o.api === api).length : ops.length;
}

/** Milliseconds the first load (reading, parsing and indexing every file) took in this process. */
export function specLoadMs(): number {
  return getIndex().loadMs;
}

/**
 * The concrete path as the spec spells it: query removed, `/_proto/` read as `/_matrix/`, and the
 * client API's `r0` read as `v3` (the spec documents only v1 and v3).
 */
export function normalizeRequestPath(requestPath: string): string {
  let p = requestPath.split("?")[0]!.split("#")[0]!;
  p = p.replace(/^\/_proto\//, "/_matrix/");
  p = p.replace(/^\/_matrix\/client\/r0\//, "/_matrix/client/v3/");
  return p;
}

/** The spec operation for a request, or undefined. */
export function findOperation(method: string, requestPath: string): { template: string; operationId: string | undefined; api: SpecApi } | undefined {
  const op = match(method, requestPath);
  return op && { template: op.template, operationId: op.operationId, api: op.api };
}

function match(method: string, requestPath: string): Operation | undefined {
  const p = normalizeRequestPath(requestPath);
  const m = method.toUpperCase();
  let best: Operation | undefined;
  for (const op of getIndex().operations) {
    if (op.method !== m || !op.regex.test(p)) continue;
    if (!best || op.literal > best.literal) best = op;
  }
  return best;
}

function getAjv(): InstanceType<typeof Ajv2020Module.default> {
  if (ajv) return ajv;
  const Ajv2020 = (Ajv2020Module as unknown as { default: typeof Ajv2020Module.default }).default ?? Ajv2020Module;
  const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (a: unknown) => void;
  const a = new Ajv2020({ strict: false, allErrors: true, validateSchema: false, logger: false });
  addFormats(a);
  // The spec's own formats: the regexes documented (as comments) in string-formats.yaml, else any string.
  const text = readFileSync(path.join(specDir(), "data/string-formats.yaml"), "utf8");
  const formats = parseYaml(text) as Record<string, unknown>;
  for (const name of Object.keys(formats)) {
    if (!name.startsWith("mx-")) continue;
    const block = new RegExp(`^${name}:\\n((?:[ \\t].*\\n?)*)`, "m").exec(text)?.[1] ?? "";
    const rx = /^\s*#\s*regex:\s*("(?:[^"\\]|\\.)*")/m.exec(block)?.[1];
    const re = rx ? new RegExp(YAML.parse(rx) as string) : undefined;
    a.addFormat(name, { type: "string", validate: (s: string) => (re ? re.test(s) : true) });
  }
  // OpenAPI's numeric formats: Matrix integers are JSON-safe.
  a.addFormat("int64", { type: "number", validate: (n: number) => Number.isSafeInteger(n) });
  a.addFormat("int32", { type: "number", validate: (n: number) => Number.isInteger(n) && Math.abs(n) <= 2 ** 31 });
  a.addFormat("float", { type: "number", validate: () => true });
  ajv = a;
  return a;
}

function responseKey(responses: JsonObject, status: number): string | undefined {
  const exact = String(status);
  if (exact in responses) return exact;
  const range = `${String(status)[0]}XX`;
  for (const k of Object.keys(responses)) if (k.toUpperCase() === range) return k;
  if ("default" in responses) return "default";
  return undefined;
}

/**
 * Where Weft answers as Synapse does rather than as a schema reads — deliberate, each with its reason:
 * "METHOD template status" → JSON pointers (into the response schema) of string properties that may be null.
 */
const NULLABLE: Record<string, string[]> = {
  // Synapse gives each member both fields, null when unset; clients and Complement's TestRoomState expect the keys.
  "GET /_matrix/client/v3/rooms/{roomId}/joined_members 200": ["/properties/joined/patternProperties/^@/properties/display_name", "/properties/joined/patternProperties/^@/properties/avatar_url"],
};

/** The schema with NULLABLE's properties also allowing null (copied along each pointer: dereferenced nodes are shared). */
function withNullable(schema: JsonObject, pointers: string[] | undefined): JsonObject {
  if (!pointers) return schema;
  const root: JsonObject = { ...schema };
  for (const ptr of pointers) {
    let node = root;
    for (const key of ptr.slice(1).split("/")) {
      const child = { ...(node[key] as JsonObject) };
      node[key] = child;
      node = child;
    }
    node.type = [node.type as string, "null"];
  }
  return root;
}

function validatorFor(op: Operation, status: number): { validate: ValidateFunction; statusKey: string } {
  const cacheKey = `${op.method} ${op.template} ${status}`;
  const hit = validators.get(cacheKey);
  if (hit) return hit;
  const where = `${op.method} ${op.template} (${op.operationId ?? "no operationId"}, ${path.relative(specDir(), op.file)})`;
  const responses = deref((op.raw.responses ?? {}) as Json, op.file) as JsonObject;
  const statusKey = responseKey(responses, status);
  if (!statusKey) {
    throw new AssertionError({ message: `spec: status ${status} is not documented for ${where}; documented: ${Object.keys(responses).join(", ")}` });
  }
  const content = (responses[statusKey] as JsonObject).content as JsonObject | undefined;
  const schema = (content?.["application/json"] as JsonObject | undefined)?.schema;
  if (!schema || typeof schema !== "object") {
    throw new AssertionError({ message: `spec: response ${statusKey} of ${where} documents no application/json schema` });
  }
  const validate = getAjv().compile(withNullable(schema as JsonObject, NULLABLE[`${op.method} ${op.template} ${statusKey}`]) as object);
  const out = { validate, statusKey };
  validators.set(cacheKey, out);
  return out;
}

/**
 * Asserts that a response body matches the spec's schema for (method, path, status). Throws when the
 * body does not match, when no operation matches the path, or when the status is not documented.
 */
export function expectMatchesSpec(res: { status: number; json: unknown }, method: string, requestPath: string): void {
  const op = match(method, requestPath);
  if (!op) {
    throw new AssertionError({ message: `spec: no operation documented for ${method.toUpperCase()} ${requestPath} (read as ${normalizeRequestPath(requestPath)})` });
  }
  const { validate, statusKey } = validatorFor(op, res.status);
  if (validate(res.json)) return;
  const errors = (validate.errors ?? []).map((e) => `  ${e.instancePath || "(body)"} ${e.message ?? ""}${Object.keys(e.params).length ? " " + JSON.stringify(e.params) : ""} [schema ${e.schemaPath}]`);
  throw new AssertionError({
    message: `spec: ${method.toUpperCase()} ${requestPath} → ${res.status} does not match ${op.template} response "${statusKey}":\n${errors.join("\n")}\nbody: ${JSON.stringify(res.json, null, 2)}`,
    actual: res.json,
  });
}

/**
 * Dereferences and compiles every documented JSON response schema (a sanity check for this helper);
 * returns how many compiled. Throws on the first that cannot be resolved or compiled.
 */
export function compileAllResponses(): number {
  let n = 0;
  for (const op of getIndex().operations) {
    const responses = deref((op.raw.responses ?? {}) as Json, op.file) as JsonObject;
    for (const [key, r] of Object.entries(responses)) {
      const schema = (((r as JsonObject).content as JsonObject | undefined)?.["application/json"] as JsonObject | undefined)?.schema;
      if (!schema || typeof schema !== "object") continue;
      const status = /^\d+$/.test(key) ? Number(key) : key === "default" ? 599 : Number(key[0]) * 100 + 99;
      const cacheKey = `${op.method} ${op.template} ${status}`;
      if (!validators.has(cacheKey)) validators.set(cacheKey, { validate: getAjv().compile(schema as object), statusKey: key });
      n++;
    }
  }
  return n;
}

const requestValidators = new Map<string, ValidateFunction>();

/**
 * Asserts that a request body matches the spec's requestBody schema for (method, path): e.g. what a push
 * gateway receives (POST /_matrix/push/v1/notify). Throws like expectMatchesSpec.
 */
export function expectRequestMatchesSpec(body: unknown, method: string, requestPath: string): void {
  const op = match(method, requestPath);
  if (!op) throw new AssertionError({ message: `spec: no operation documented for ${method.toUpperCase()} ${requestPath}` });
  const key = `${op.method} ${op.template}`;
  let validate = requestValidators.get(key);
  if (!validate) {
    const requestBody = deref((op.raw.requestBody ?? {}) as Json, op.file) as JsonObject;
    const schema = ((requestBody.content as JsonObject | undefined)?.["application/json"] as JsonObject | undefined)?.schema;
    if (!schema || typeof schema !== "object") throw new AssertionError({ message: `spec: ${key} documents no application/json request body` });
    validate = getAjv().compile(schema as object);
    requestValidators.set(key, validate);
  }
  if (validate(body)) return;
  const errors = (validate.errors ?? []).map((e) => `  ${e.instancePath || "(body)"} ${e.message ?? ""} [schema ${e.schemaPath}]`);
  throw new AssertionError({ message: `spec: request body of ${key} does not match:\n${errors.join("\n")}\nbody: ${JSON.stringify(body, null, 2)}`, actual: body });
}

/** A parameter of an operation as the fuzz suite reads it (dereferenced). */
export interface SpecParameter {
  name: string;
  in: "path" | "query" | "header" | "cookie";
  required: boolean;
  schema: JsonObject;
  example?: Json;
}

/** An operation's request: its parameters and body, dereferenced (test/fuzz drives them). */
export interface SpecOperation {
  api: SpecApi;
  method: string;
  /** Full path template, e.g. /_matrix/client/v3/rooms/{roomId}/send/{eventType}/{txnId}. */
  template: string;
  operationId: string | undefined;
  parameters: SpecParameter[];
  /** The request body: its content type, schema and example (the first documented content type). */
  body?: { required: boolean; contentType: string; schema: JsonObject; example?: Json };
  /** Whether the operation takes an access token (any security requirement). */
  authenticated: boolean;
  deprecated: boolean;
}

/** Every operation of one API with its request side dereferenced, in a stable order. */
export function specOperations(api: SpecApi): SpecOperation[] {
  return getIndex().operations.filter((op) => op.api === api).map((op) => {
    const params = (deref((op.raw.parameters ?? []) as Json, op.file) as JsonObject[]).map((p) => ({
      name: String(p.name),
      in: p.in as SpecParameter["in"],
      required: p.required === true,
      schema: (p.schema ?? {}) as JsonObject,
      ...(p.example !== undefined ? { example: p.example } : {}),
    }));
    const rb = op.raw.requestBody ? (deref(op.raw.requestBody as Json, op.file) as JsonObject) : undefined;
    let body: SpecOperation["body"];
    if (rb && rb.content && typeof rb.content === "object") {
      const [contentType, media] = Object.entries(rb.content as JsonObject)[0] ?? [];
      if (contentType && media && typeof media === "object") {
        const m = media as JsonObject;
        const schema = (m.schema ?? {}) as JsonObject;
        const example = m.example ?? (m.examples && typeof m.examples === "object" ? Object.values(m.examples as JsonObject).map((e) => (e as JsonObject)?.value)[0] : undefined) ?? schema.example;
        body = { required: rb.required === true, contentType, schema, ...(example !== undefined ? { example } : {}) };
      }
    }
    const security = op.raw.security as JsonObject[] | undefined;
    return {
      api: op.api,
      method: op.method,
      template: op.template,
      operationId: op.operationId,
      parameters: params,
      ...(body ? { body } : {}),
      authenticated: Array.isArray(security) && security.some((req) => Object.keys(req).length > 0),
      deprecated: op.raw.deprecated === true,
    };
  });
}
