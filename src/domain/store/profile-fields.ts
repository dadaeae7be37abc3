// Repository of local users' extended profile fields (table profile_fields: every key but displayname and
// avatar_url, which are columns of `profiles`), each value kept as its JSON text. Spec: Client-Server API
// "Profiles" (v1.16, MSC4133).
import type { Db, Tx } from "../../storage/database.ts";
import type { Dialect } from "../../storage/sql.ts";
import { parseJsonText, stringifyJson } from "../json-limits.ts";

type Client = Db | Tx;

export class ProfileFieldStore {
  constructor(private readonly db: Db, private readonly dialect: Dialect) {}

  /** The user's extended fields, key → value, in key order (a null-prototype object: keys are data). */
  async all(userId: string, tx: Client = this.db): Promise<Record<string, unknown>> {
    const rows = await tx.profileField.findMany({ where: { userId }, select: { key: true, value: true }, orderBy: { key: "asc" } });
    const out: Record<string, unknown> = Object.create(null);
    for (const r of rows) out[r.key] = parseJsonText(r.value);
    return out;
  }

  /** One field: `{ value }`, or undefined when the user has no such field. */
  async get(userId: string, key: string): Promise<{ value: unknown } | undefined> {
    const row = await this.db.profileField.findFirst({ where: { userId, key }, select: { value: true } });
    return row ? { value: parseJsonText(row.value) } : undefined;
  }

  async set(tx: Client, userId: string, key: string, value: unknown): Promise<void> {
    const text = stringifyJson(value);
    await tx.profileField.upsert({ where: { userId_key: { userId, key } }, create: { userId, key, value: text }, update: { value: text } });
  }

  /** Removes one field; false when there was none. */
  async delete(tx: Client, userId: string, key: string): Promise<boolean> {
    return (await tx.profileField.deleteMany({ where: { userId, key } })).count > 0;
  }

  async deleteAll(tx: Client, userId: string): Promise<void> {
    await tx.profileField.deleteMany({ where: { userId } });
  }

  /**
   * Inside a transaction: holds the user's `profiles` row until it ends, so two changes of one profile
   * check its total size one after the other (PostgreSQL; SQLite's write transactions are serialized).
   */
  async lockProfile(tx: Tx, userId: string): Promise<void> {
    if (this.dialect === "postgres") await tx.$executeRawUnsafe(`SELECT 1 FROM profiles WHERE user_id = $1 FOR UPDATE`, userId);
  }
}
