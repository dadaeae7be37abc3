/** An operation asked of the client before it existed: runs on the client when awaited. */
class Deferred {
    client;
    on;
    #started;
    constructor(client, 
    /** The operation on the real client: a Prisma promise, itself run when awaited. */
    on) {
        this.client = client;
        this.on = on;
    }
    #run() {
        return (this.#started ??= this.client().then((db) => this.on(db)));
    }
    then(ok, fail) {
        return this.#run().then(ok, fail);
    }
    catch(fail) {
        return this.#run().catch(fail);
    }
    finally(f) {
        return this.#run().finally(f);
    }
    get [Symbol.toStringTag]() {
        return "PrismaPromise";
    }
}
/**
 * A handle on the client `create` makes, called once, on the first operation (`firstUse` is told which:
 * "user.findFirst", "$transaction" ...). Until then nothing of Prisma is loaded.
 */
export function lazyClient(create, firstUse) {
    let client;
    let loading;
    const load = (operation) => {
        if (!loading) {
            firstUse?.(operation);
            loading = create().then((c) => (client = c));
            loading.catch(() => (loading = undefined)); // a failed open is tried again by the next operation
        }
        return loading;
    };
    const models = new Map();
    const model = (name) => {
        let m = models.get(name);
        if (!m)
            models.set(name, (m = new Proxy({}, {
                get: (_t, op) => {
                    if (client) {
                        const delegate = client[name];
                        const v = delegate[op];
                        return typeof v === "function" ? v.bind(delegate) : v;
                    }
                    if (typeof op !== "string")
                        return undefined;
                    return (...args) => new Deferred(() => load(`${name}.${op}`), (db) => (db[name][op])(...args));
                },
            })));
        return m;
    };
    const db = new Proxy({}, {
        get: (_t, prop) => {
            if (client) {
                const v = client[prop];
                return typeof v === "function" ? v.bind(client) : v;
            }
            if (typeof prop !== "string" || prop === "then")
                return undefined; // the handle is no promise itself
            if (prop === "$disconnect")
                return async () => (loading ? (await loading).$disconnect() : undefined);
            if (prop === "$connect")
                return async () => (await load(prop)).$connect();
            if (prop === "$transaction")
                return async (arg, opts) => {
                    const c = await load(prop);
                    // A batch: the operations asked before the client existed become the client's own.
                    const batch = Array.isArray(arg) ? arg.map((op) => (op instanceof Deferred ? op.on(c) : op)) : arg;
                    return c.$transaction(batch, opts);
                };
            if (prop.startsWith("$"))
                return (...args) => new Deferred(() => load(prop), (c) => (c[prop])(...args));
            return model(prop);
        },
    });
    return { db, loaded: () => client };
}
