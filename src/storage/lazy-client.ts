// A Prisma client created on first use. Prisma's runtime and its wasm query compiler weigh tens of MB and
// take a good part of start-up; a server whose start-up and common requests run on raw SQL need not load
// them until some request does. The handle has the client's shape: model operations and `$` methods give
// lazy promises (run when awaited, as Prisma's own), which a batch `$transaction([...])` accepts too.
import type { Db } from "./database.ts";

/** An operation asked of the client before it existed: runs on the client when awaited. */
class Deferred<T> implements PromiseLike<T> {
  #started: Promise<T> | undefined;
  constructor(
    private readonly client: () => Promise<Db>,
    /** The operation on the real client: a Prisma promise, itself run when awaited. */
    readonly on: (db: Db) => PromiseLike<T>,
  ) {}
  #run(): Promise<T> {
    return (this.#started ??= this.client().then((db) => this.on(db)));
  }
  then<A = T, B = never>(ok?: ((v: T) => A | PromiseLike<A>) | null, fail?: ((e: unknown) => B | PromiseLike<B>) | null): Promise<A | B> {
    return this.#run().then(ok, fail);
  }
  catch<B = never>(fail?: ((e: unknown) => B | PromiseLike<B>) | null): Promise<T | B> {
    return this.#run().catch(fail);
  }
  finally(f?: (() => void) | null): Promise<T> {
    return this.#run().finally(f);
  }
  get [Symbol.toStringTag](): string {
    return "PrismaPromise";
  }
}

export interface LazyClient {
  /** The handle repositories use. */
  db: Db;
  /** The client, if something has used it. */
  loaded(): Db | undefined;
}

type AnyFn = (...args: unknown[]) => PromiseLike<unknown>;

/**
 * A handle on the client `create` makes, called once, on the first operation (`firstUse` is told which:
 * "user.findFirst", "$transaction" ...). Until then nothing of Prisma is loaded.
 */
export function lazyClient(create: () => Promise<Db>, firstUse?: (operation: string) => void): LazyClient {
  let client: Db | undefined;
  let loading: Promise<Db> | undefined;
  const load = (operation: string): Promise<Db> => {
    if (!loading) {
      firstUse?.(operation);
      loading = create().then((c) => (client = c));
      loading.catch(() => (loading = undefined)); // a failed open is tried again by the next operation
    }
    return loading;
  };
  const models = new Map<string, unknown>();
  const model = (name: string) => {
    let m = models.get(name);
    if (!m)
      models.set(name, (m = new Proxy({}, {
        get: (_t, op) => {
          if (client) {
            const delegate = (client as unknown as Record<string, Record<string | symbol, unknown>>)[name]!;
            const v = delegate[op];
            return typeof v === "function" ? v.bind(delegate) : v;
          }
          if (typeof op !== "string") return undefined;
          return (...args: unknown[]) => new Deferred(() => load(`${name}.${op}`), (db) => ((db as unknown as Record<string, Record<string, AnyFn>>)[name]![op]!)(...args));
        },
      })));
    return m;
  };
  const db = new Proxy({} as Db, {
    get: (_t, prop) => {
      if (client) {
        const v = (client as unknown as Record<string | symbol, unknown>)[prop];
        return typeof v === "function" ? v.bind(client) : v;
      }
      if (typeof prop !== "string" || prop === "then") return undefined; // the handle is no promise itself
      if (prop === "$disconnect") return async () => (loading ? (await loading).$disconnect() : undefined);
      if (prop === "$connect") return async () => (await load(prop)).$connect();
      if (prop === "$transaction")
        return async (arg: unknown, opts?: unknown) => {
          const c = await load(prop);
          // A batch: the operations asked before the client existed become the client's own.
          const batch = Array.isArray(arg) ? arg.map((op) => (op instanceof Deferred ? op.on(c) : op)) : arg;
          return (c.$transaction as (a: unknown, o?: unknown) => Promise<unknown>)(batch, opts);
        };
      if (prop.startsWith("$"))
        return (...args: unknown[]) => new Deferred(() => load(prop), (c) => ((c as unknown as Record<string, AnyFn>)[prop]!)(...args));
      return model(prop);
    },
  });
  return { db, loaded: () => client };
}
