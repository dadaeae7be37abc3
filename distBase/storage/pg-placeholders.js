// `?` placeholders (the raw-SQL layer's, src/storage/sql.ts) rewritten to PostgreSQL's `$1, $2 ...`. Free
// of pg itself, so modules that build SQL for both databases can import it without loading the driver.
import { LruCache } from "../domain/cache/lru.js";
/** `?` → `$1, $2 ...` (outside quoted strings), cached per statement text (bounded, as for SQLite). */
const pgTextCache = new LruCache("pg_statement_texts", 2000);
export function toPgPlaceholders(sql) {
    let out = pgTextCache.get(sql);
    if (out !== undefined)
        return out;
    let n = 0;
    let quoted = false;
    out = "";
    for (const ch of sql) {
        if (ch === "'")
            quoted = !quoted;
        out += ch === "?" && !quoted ? `$${++n}` : ch;
    }
    pgTextCache.set(sql, out);
    return out;
}
