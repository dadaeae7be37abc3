// Repository of push rules: a user's own rules (push_rules, ordered per kind by `position`), their changes
// to server-default rules (push_rule_overrides) and the push_rules stream (push_rules_stream: one row per
// user, the position of their last change). Each change commits with its new stream position.
// Spec: Client-Server API "Push Rules: API", "Push Rules: Events".
import type { Sql, SqlExecutor } from "../../storage/sql.ts";
import { idAllocator, type IdAllocator } from "./ids.ts";

export interface StoredPushRule {
  kind: string;
  ruleId: string;
  position: number;
  conditions: string | null;
  pattern: string | null;
  actions: string;
  enabled: boolean;
}

export interface StoredOverride {
  kind: string;
  ruleId: string;
  enabled: boolean | null;
  actions: string | null;
}

interface RuleRow {
  kind: string;
  rule_id: string;
  position: number | string;
  conditions: string | null;
  pattern: string | null;
  actions: string;
  enabled: boolean | number;
}

export class PushRuleStore {
  readonly streamIds: IdAllocator;
  constructor(private readonly sql: Sql) {
    this.streamIds = idAllocator(sql, "push_rules_stream", "stream_id", "push_rules_stream_seq");
  }

  currentPosition(): number | Promise<number> {
    return this.streamIds.now();
  }

  async rules(userId: string): Promise<StoredPushRule[]> {
    return (await this.rulesOfUsers([userId])).rules.get(userId) ?? [];
  }

  /** The rules and default-rule changes of many users: two queries per 500 users. */
  async rulesOfUsers(userIds: readonly string[]): Promise<{ rules: Map<string, StoredPushRule[]>; overrides: Map<string, StoredOverride[]> }> {
    const rules = new Map<string, StoredPushRule[]>();
    const overrides = new Map<string, StoredOverride[]>();
    for (let i = 0; i < userIds.length; i += 500) {
      const chunk = userIds.slice(i, i + 500);
      const marks = chunk.map(() => "?").join(",");
      const rows = await this.sql.all<RuleRow & { user_id: string }>(
        `SELECT user_id, kind, rule_id, position, conditions, pattern, actions, enabled FROM push_rules WHERE user_id IN (${marks})`,
        chunk,
      );
      for (const r of rows) {
        const list = rules.get(r.user_id) ?? [];
        list.push({ kind: r.kind, ruleId: r.rule_id, position: Number(r.position), conditions: r.conditions, pattern: r.pattern, actions: r.actions, enabled: Boolean(r.enabled) });
        rules.set(r.user_id, list);
      }
      const orows = await this.sql.all<{ user_id: string; kind: string; rule_id: string; enabled: boolean | number | null; actions: string | null }>(
        `SELECT user_id, kind, rule_id, enabled, actions FROM push_rule_overrides WHERE user_id IN (${marks})`,
        chunk,
      );
      for (const r of orows) {
        const list = overrides.get(r.user_id) ?? [];
        list.push({ kind: r.kind, ruleId: r.rule_id, enabled: r.enabled === null ? null : Boolean(r.enabled), actions: r.actions });
        overrides.set(r.user_id, list);
      }
    }
    return { rules, overrides };
  }

  /** Runs `fn` in a transaction that also moves the user's push_rules stream position; returns it. */
  async change(userId: string, fn: (tx: SqlExecutor) => Promise<void>): Promise<number> {
    return this.sql.transaction(async (tx) => {
      await fn(tx);
      const id = await this.streamIds.next(tx);
      const n = await tx.run(`UPDATE push_rules_stream SET stream_id = ? WHERE user_id = ?`, [id, userId]);
      if (n === 0) await tx.run(`INSERT INTO push_rules_stream (user_id, stream_id) VALUES (?, ?)`, [userId, id]);
      return id;
    });
  }

  async upsertRule(tx: SqlExecutor, userId: string, r: Omit<StoredPushRule, "enabled"> & { enabled?: boolean }): Promise<void> {
    const n = await tx.run(`UPDATE push_rules SET position = ?, conditions = ?, pattern = ?, actions = ? WHERE user_id = ? AND kind = ? AND rule_id = ?`, [
      r.position, r.conditions, r.pattern, r.actions, userId, r.kind, r.ruleId,
    ]);
    if (n === 0)
      await tx.run(`INSERT INTO push_rules (user_id, kind, rule_id, position, conditions, pattern, actions, enabled) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, [
        userId, r.kind, r.ruleId, r.position, r.conditions, r.pattern, r.actions, r.enabled ?? true,
      ]);
  }

  async setPosition(tx: SqlExecutor, userId: string, kind: string, ruleId: string, position: number): Promise<void> {
    await tx.run(`UPDATE push_rules SET position = ? WHERE user_id = ? AND kind = ? AND rule_id = ?`, [position, userId, kind, ruleId]);
  }

  async setRuleAttr(tx: SqlExecutor, userId: string, kind: string, ruleId: string, attr: { enabled?: boolean; actions?: string }): Promise<void> {
    if (attr.enabled !== undefined) await tx.run(`UPDATE push_rules SET enabled = ? WHERE user_id = ? AND kind = ? AND rule_id = ?`, [attr.enabled, userId, kind, ruleId]);
    if (attr.actions !== undefined) await tx.run(`UPDATE push_rules SET actions = ? WHERE user_id = ? AND kind = ? AND rule_id = ?`, [attr.actions, userId, kind, ruleId]);
  }

  async deleteRule(tx: SqlExecutor, userId: string, kind: string, ruleId: string): Promise<number> {
    return tx.run(`DELETE FROM push_rules WHERE user_id = ? AND kind = ? AND rule_id = ?`, [userId, kind, ruleId]);
  }

  async setOverride(tx: SqlExecutor, userId: string, kind: string, ruleId: string, attr: { enabled?: boolean; actions?: string }): Promise<void> {
    const n = await tx.run(
      `UPDATE push_rule_overrides SET enabled = COALESCE(?, enabled), actions = COALESCE(?, actions) WHERE user_id = ? AND kind = ? AND rule_id = ?`,
      [attr.enabled ?? null, attr.actions ?? null, userId, kind, ruleId],
    );
    if (n === 0)
      await tx.run(`INSERT INTO push_rule_overrides (user_id, kind, rule_id, enabled, actions) VALUES (?, ?, ?, ?, ?)`, [userId, kind, ruleId, attr.enabled ?? null, attr.actions ?? null]);
  }

  /** The position of the user's last push rule change, if any. */
  async lastChange(userId: string): Promise<number | undefined> {
    const r = await this.sql.get<{ stream_id: number | string }>(`SELECT stream_id FROM push_rules_stream WHERE user_id = ?`, [userId]);
    return r ? Number(r.stream_id) : undefined;
  }
}
