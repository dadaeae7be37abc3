// What a path under /pushrules/ names, at every level (spec: Client-Server API "Push Rules: API"; the
// levels the spec leaves out as Synapse reads them): the set, a scope's, a kind's rules, a rule, an
// attribute. A path missing a level or naming a scope other than `global` is 400 M_UNRECOGNIZED.
import { MatrixError } from "../errors.ts";
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { deleteRule, getOwnRuleset, getRule, getRuleAttr, putRule, setRuleAttr } from "./rules-api.ts";
import { parseKind, ruleAttrChangeOf } from "./rule-types.ts";

/**
 * The path's segments after `pushrules/`, as the router split them: `/pushrules/` is [""],
 * `/pushrules/global` ["global"], `/pushrules/global/` ["global", ""], `/pushrules/global/override/.x`
 * ["global", "override", ".x"].
 */
export type RulePath = readonly string[];

const unrecognized = (why: string) => new MatrixError("M_UNRECOGNIZED", why, 400);
const TRAILING_SLASH = "Unrecognised request: You probably wanted a trailing slash";

function checkScope(scope: string): void {
  if (scope !== "global") throw unrecognized(scope === "" ? "Unrecognised request: no push rule scope given" : `Unrecognised push rule scope: ${scope}`);
}

/** GET /pushrules/...: the ruleset ({global}), the scope's ruleset, a kind's rules (a JSON array), a rule or an attribute. */
export async function readRulePath(s: Services, r: Requester, path: RulePath): Promise<unknown> {
  const [scope = "", kind, ruleId, attr] = path;
  if (path.length === 1 && scope === "") return { global: await getOwnRuleset(s, r) };
  checkScope(scope);
  if (kind === undefined) throw unrecognized(TRAILING_SLASH);
  if (kind === "") return getOwnRuleset(s, r);
  const k = parseKind(kind);
  if (ruleId === undefined) throw unrecognized(TRAILING_SLASH);
  if (ruleId === "") return (await getOwnRuleset(s, r))[k];
  return attr === undefined ? getRule(s, r, k, ruleId) : getRuleAttr(s, r, k, ruleId, attr);
}

/** The rule (and attribute) a write or delete names: every level up to the rule id must be there. */
function writeTarget(path: RulePath): { kind: string; ruleId: string; attr: string | undefined } {
  const [scope = "", kind, ruleId, attr] = path;
  checkScope(scope);
  if (kind === undefined || kind === "") throw unrecognized("Unrecognised request: no push rule kind given");
  if (ruleId === undefined || ruleId === "") throw unrecognized("Unrecognised request: no push rule id given");
  // `.../{ruleId}/` names the rule itself, as Synapse reads it.
  return { kind, ruleId, attr: attr === "" ? undefined : attr };
}

/** PUT /pushrules/...: adds or replaces a rule, or sets its `enabled` / `actions`. */
export async function writeRulePath(s: Services, r: Requester, path: RulePath, body: () => Record<string, unknown>, rel: { before?: string; after?: string }): Promise<void> {
  const t = writeTarget(path);
  if (t.attr !== undefined) await setRuleAttr(s, r, t.kind, t.ruleId, ruleAttrChangeOf(t.attr, body));
  else {
    const b = body();
    await putRule(s, r, t.kind, t.ruleId, { actions: b.actions, conditions: b.conditions, pattern: b.pattern }, rel);
  }
}

/** DELETE /pushrules/... (up to the rule id: attributes are not deleted): deletes a user rule. */
export async function deleteRulePath(s: Services, r: Requester, path: RulePath): Promise<void> {
  const t = writeTarget(path);
  await deleteRule(s, r, t.kind, t.ruleId);
}
