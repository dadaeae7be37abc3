async function time(timer, client, operation, run) {
    const started = performance.now();
    try {
        return await run();
    }
    finally {
        timer(client, operation, (performance.now() - started) / 1000);
    }
}
/** An executor whose run/all/get are timed; everything else (onSettled ...) is the original's. */
function timedExecutor(inner, timer) {
    return Object.assign(Object.create(inner), {
        run: (sql, p) => time(timer, "sql", "run", () => inner.run(sql, p)),
        all: (sql, p) => time(timer, "sql", "all", () => inner.all(sql, p)),
        get: (sql, p) => time(timer, "sql", "get", () => inner.get(sql, p)),
    });
}
/** `sql` with every query timed, those inside transactions too, and each transaction as a whole. */
export function timedSql(sql, timer) {
    const outer = timedExecutor(sql, timer);
    return Object.assign(outer, {
        transaction: (fn) => time(timer, "sql", "transaction", () => sql.transaction((tx) => fn(timedExecutor(tx, timer)))),
        close: () => sql.close(),
    });
}
/** Times a Prisma operation (called from the client's `$allOperations` extension). */
export function timePrisma(timer, model, operation, run) {
    return time(timer, "prisma", model ? `${model}.${operation}` : operation, run);
}
