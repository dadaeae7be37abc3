// Who may invite a local user, from the user's account data. Two kinds, as Synapse 1.163 reads them:
// - invite blocking (spec v1.18, MSC4380): `m.invite_permission_config` with `default_action: "block"`
//   refuses every invite; any other content (no `default_action`, an unknown value) lets invites through.
//   Always on. When the user has it, it alone decides (Synapse prefers it over MSC4155's);
// - invite filtering (MSC4155, with experimental_features.msc4155_enabled as Synapse):
//   `org.matrix.msc4155.invite_permission_config` names, as globs, users and servers whose invites are
//   allowed, ignored or blocked. User rules first, then server rules, each in that order of kinds; the
//   first match decides, and no match allows.
// A blocked invite is refused (403 M_INVITE_BLOCKED) wherever it is made — locally (rooms/membership.ts
// /invite, rooms/send.ts the state API, rooms/create-room.ts createRoom's `invite`) or by another server
// (federation/membership/receive-invite.ts, PUT /invite v1 and v2), server admins exempt locally (as
// Synapse). Invites blocked or ignored are kept out of /sync and sliding sync (sync/providers/events.ts).
// Spec: Client-Server API "Invite permission" (v1.18); MSC4155.
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { MatrixError } from "../errors.ts";
import { isPlainObject } from "../events/types.ts";
import { serverOf } from "../auth/context.ts";
import { globMatchesWhole } from "../push/matchers.ts";

/** The stable account data type of invite blocking (spec v1.18). */
export const INVITE_PERMISSION_CONFIG = "m.invite_permission_config";
/** MSC4155's unstable account data type of invite filtering. */
export const MSC4155_INVITE_PERMISSION_CONFIG = "org.matrix.msc4155.invite_permission_config";

export type InviteRule = "allow" | "ignore" | "block";

const RULES: InviteRule[] = ["allow", "ignore", "block"];
const FIELD: Record<InviteRule, string> = { allow: "allowed", ignore: "ignored", block: "blocked" };

/** The globs of one field: strings of 1–255 characters (longer ones are skipped, as Synapse does). */
function globsOf(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((g): g is string => typeof g === "string" && g.length > 0 && g.length <= 255) : [];
}

/** What an MSC4155 config (the account data's content) says of an invite from `inviter`. */
export function inviteRuleOf(config: Record<string, unknown> | undefined, inviter: string): InviteRule {
  if (!config) return "allow";
  for (const [what, value] of [["users", inviter], ["servers", serverOf(inviter)]] as const) {
    for (const rule of RULES) if (globsOf(config[`${FIELD[rule]}_${what}`]).some((g) => globMatchesWhole(g, value))) return rule;
  }
  return "allow";
}

/** What an `m.invite_permission_config` content says of every invite: only `default_action: "block"` blocks. */
export function blockingRuleOf(config: Record<string, unknown>): InviteRule {
  return config["default_action"] === "block" ? "block" : "allow";
}

/** A local user's rule for invites, by inviter. */
export type InviteRules = (inviter: string) => InviteRule;

/** The rules `userId` (a local user) set: invite blocking's when set, else MSC4155's when on; undefined: none. */
export async function inviteRulesOf(s: Services, userId: string): Promise<InviteRules | undefined> {
  if (serverOf(userId) !== s.config.server_name) return undefined;
  const blocking = await s.accountData.get(userId, "", INVITE_PERMISSION_CONFIG);
  if (isPlainObject(blocking)) {
    const rule = blockingRuleOf(blocking);
    return () => rule;
  }
  if (!s.config.experimental_features.msc4155_enabled) return undefined;
  const filter = await s.accountData.get(userId, "", MSC4155_INVITE_PERMISSION_CONFIG);
  if (!isPlainObject(filter)) return undefined;
  return (inviter) => inviteRuleOf(filter, inviter);
}

/** What `invitee` (a local user) says of an invite from `inviter`. */
export async function inviteRule(s: Services, invitee: string, inviter: string): Promise<InviteRule> {
  return (await inviteRulesOf(s, invitee))?.(inviter) ?? "allow";
}

/** Refuses an invite of `invitee` by `inviter` that the invitee blocks (403 M_INVITE_BLOCKED). */
export async function assertInviteNotBlocked(s: Services, invitee: string, inviter: string): Promise<void> {
  if ((await inviteRule(s, invitee, inviter)) === "block") throw new MatrixError("M_INVITE_BLOCKED", "You are not permitted to invite this user.", 403);
}

/** The same for an invite a local requester makes (by /invite, the state API or createRoom): server admins may. */
export async function assertLocalInviteAllowed(s: Services, r: Requester, invitee: string): Promise<void> {
  if (!r.isAdmin) await assertInviteNotBlocked(s, invitee, r.userId);
}
