// Users' push rulesets in memory, compiled for evaluation: loaded in batches (one query for the rules and
// one for the default-rule changes of all the users not yet cached), dropped when a user changes their
// rules. Users who changed nothing share one compiled default ruleset.
import type { LruCache } from "../cache/lru.ts";
import type { PushRuleStore, StoredOverride, StoredPushRule } from "../store/push-rules.ts";
import { CompiledRuleset } from "./evaluator.ts";
import { buildRuleset } from "./ruleset.ts";
import type { DefaultRuleFeatures } from "./default-rules.ts";
import type { Ruleset } from "./rule-types.ts";

export interface UserRules {
  json: Ruleset;
  compiled: CompiledRuleset;
}

export class RuleCache {
  private sharedDefault: CompiledRuleset | undefined;
  /** Bumped per user on each change: a load that raced a change is not cached. */
  private readonly versions = new Map<string, number>();

  constructor(readonly store: PushRuleStore, private readonly cache: LruCache<string, UserRules>, private readonly features: DefaultRuleFeatures = { msc4306: false }) {}

  private make(userId: string, stored: StoredPushRule[], overrides: StoredOverride[]): UserRules {
    const json = buildRuleset(userId, stored, overrides, this.features);
    const plain = stored.length === 0 && overrides.length === 0;
    const compiled = plain ? (this.sharedDefault ??= new CompiledRuleset(json)) : new CompiledRuleset(json);
    return { json, compiled };
  }

  async of(userId: string): Promise<UserRules> {
    return (await this.ofMany([userId])).get(userId)!;
  }

  /** The rules of every user given: cached ones from memory, the others in two queries. */
  async ofMany(userIds: readonly string[]): Promise<Map<string, UserRules>> {
    const out = new Map<string, UserRules>();
    const missing: string[] = [];
    for (const u of userIds) {
      const hit = this.cache.get(u);
      if (hit) out.set(u, hit);
      else missing.push(u);
    }
    if (missing.length === 0) return out;
    const before = missing.map((u) => this.versions.get(u) ?? 0);
    const { rules, overrides } = await this.store.rulesOfUsers(missing);
    missing.forEach((u, i) => {
      const r = this.make(u, rules.get(u) ?? [], overrides.get(u) ?? []);
      out.set(u, r);
      if ((this.versions.get(u) ?? 0) === before[i]) this.cache.set(u, r);
    });
    return out;
  }

  drop(userId: string): void {
    this.versions.set(userId, (this.versions.get(userId) ?? 0) + 1);
    this.cache.delete(userId);
  }
}
