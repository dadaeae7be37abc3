// Subscription payloads executed once for all the subscribers that would get the same answer. graphql-js
// runs an operation's whole selection set per subscriber per payload; when a room's N subscribers are
// handed the same root object (roomTimeline gives every reader of one visibility class the same update:
// resolvers/sync.ts) with the same operation text and variables, and the operation selects no field whose
// answer depends on who asks (a field resolver taking the context), the result is computed once and
// every subscriber is sent that one result. Per subscriber remain the access and visibility checks that
// chose the root object, and the socket write. Used as graphql-ws's `subscribe` (engine.ts).
import {
  createSourceEventStream,
  execute,
  print,
  TypeInfo,
  visit,
  visitWithTypeInfo,
  type ExecutionArgs,
  type ExecutionResult,
} from "graphql";
import { getMetadataStorage } from "type-graphql";

/** Root objects whose executions may be shared (marked by the resolver that builds them). */
const shareableRoots = new WeakSet<object>();
/** Per shared root object: the result per operation key (text, operation name, variables). */
const results = new WeakMap<object, Map<string, Promise<ExecutionResult>>>();

/**
 * Marks a subscription payload as the same object for every subscriber that sees it (see the header).
 * The subscription's root field must return such a payload as it is, whatever its arguments.
 */
export function shareable<T extends object>(root: T): T {
  shareableRoots.add(root);
  return root;
}

/**
 * The fields ("Type.field") whose resolver reads the context (the viewer) or uses a custom parameter
 * decorator, from type-graphql's metadata: an operation selecting one is executed per subscriber.
 */
export function viewerDependentFields(): Set<string> {
  const md = getMetadataStorage();
  const names = new Map<Function, string>();
  for (const t of [...md.objectTypes, ...md.interfaceTypes]) names.set(t.target, t.name);
  const out = new Set<string>();
  for (const fr of md.fieldResolvers) {
    const params = md.params.filter((p) => p.target === fr.target && p.methodName === fr.methodName);
    if (!params.some((p) => p.kind === "context" || p.kind === "custom" || p.kind === "pubSub")) continue;
    const cls = (fr.getObjectType?.() ?? fr.resolverClassMetadata?.getObjectType?.() ?? fr.target) as Function;
    out.add(`${names.get(cls) ?? cls.name}.${fr.schemaName}`);
  }
  return out;
}

/**
 * The sharing key of an operation, or undefined when it selects a viewer-dependent field below the root.
 * The root field's own arguments are left out of the key (they choose the stream — which room, where to
 * resume — and a shareable payload is returned by the root field as it is); variables used anywhere else
 * are in it.
 */
export function operationKey(args: ExecutionArgs, viewerDependent: ReadonlySet<string> = viewerDependentFields()): string | undefined {
  const info = new TypeInfo(args.schema);
  const root = args.schema.getSubscriptionType();
  let dependent = false;
  const used = new Set<string>();
  visit(
    args.document,
    visitWithTypeInfo(info, {
      VariableDefinition: () => false,
      // The root field's own arguments (not a directive's on it) are left out.
      Argument: () => (info.getParentType() === root && !info.getDirective() ? false : undefined),
      Variable(node) {
        used.add(node.name.value);
      },
      Field() {
        const parent = info.getParentType();
        const field = info.getFieldDef();
        if (!parent || !field || parent === root) return;
        // A field resolver declared on an interface serves every type implementing it.
        const owners = [parent.name, ...("getInterfaces" in parent ? parent.getInterfaces().map((i) => i.name) : [])];
        if (owners.some((o) => viewerDependent.has(`${o}.${field.name}`))) dependent = true;
      },
    }),
  );
  if (dependent) return undefined;
  const values = args.variableValues ?? {};
  const vars = [...used].sort().map((name) => [name, values[name]]);
  return `${args.operationName ?? ""}\u0000${JSON.stringify(vars)}\u0000${print(args.document)}`;
}

/** An async iterator mapping each item of `source` through `fn`, forwarding return/throw. */
function mapIterator<T, U>(source: AsyncIterator<T>, fn: (value: T) => Promise<U>): AsyncIterableIterator<U> {
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    async next() {
      const r = await source.next();
      return r.done ? { value: undefined, done: true } : { value: await fn(r.value), done: false };
    },
    async return() {
      await source.return?.();
      return { value: undefined, done: true };
    },
    async throw(err: unknown) {
      if (source.throw) {
        const r = await source.throw(err);
        return r.done ? { value: undefined, done: true } : { value: await fn(r.value), done: false };
      }
      throw err;
    },
  };
}

/** graphql-js `subscribe`, with results shared per (shareable root object, operation key). */
export function makeSharedSubscribe(): (args: ExecutionArgs) => Promise<AsyncIterableIterator<ExecutionResult> | ExecutionResult> {
  let viewerDependent: Set<string> | undefined;
  return async (args) => {
    const stream = await createSourceEventStream(args);
    if (!(Symbol.asyncIterator in stream)) return stream as ExecutionResult;
    const key = operationKey(args, (viewerDependent ??= viewerDependentFields()));
    const run = (root: unknown) => execute({ ...args, rootValue: root }) as Promise<ExecutionResult> | ExecutionResult;
    return mapIterator(stream[Symbol.asyncIterator](), async (root) => {
      if (key === undefined || typeof root !== "object" || root === null || !shareableRoots.has(root)) return run(root);
      let perRoot = results.get(root);
      if (!perRoot) results.set(root, (perRoot = new Map()));
      let result = perRoot.get(key);
      if (!result) perRoot.set(key, (result = Promise.resolve(run(root))));
      return result;
    });
  };
}
