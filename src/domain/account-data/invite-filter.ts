// Invite filtering (MSC4155, with experimental_features.msc4155_enabled as Synapse): a user's
// `org.matrix.msc4155.invite_permission_config` account data names, as globs, users and servers whose
// invites are allowed, ignored or blocked. User rules first, then server rules, each in that order of
// kinds; the first match decides, and no match allows. A blocked invite is refused (403 M_INVITE_BLOCKED)
// wherever it is made — locally (rooms/membership.ts, rooms/send.ts) or by another server
// (federation/membership/receive-invite.ts), server admins exempt locally; an ignored one is kept but not
// shown in /sync, as an ignored user's invite.
import type { Services } from "../services.ts";
import type { Requester } from "../accounts/requester.ts";
import { MatrixError } from "../errors.ts";
import { isPlainObject } from "../events/types.ts";
import { serverOf } from "../auth/context.ts";
import { globMatchesWhole } from "../push/matchers.ts";

export const INVITE_PERMISSION_CONFIG = "org.matrix.msc4155.invite_permission_config";

export type InviteRule = "allow" | "ignore" | "block";

const RULES: InviteRule[] = ["allow", "ignore", "block"];
const FIELD: Record<InviteRule, string> = { allow: "allowed", ignore: "ignored", block: "blocked" };

/** The globs of one field: strings of 1–255 characters (longer ones are skipped, as Synapse does). */
function globsOf(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((g): g is string => typeof g === "string" && g.length > 0 && g.length <= 255) : [];
}

/** What `config` (the account data's content) says of an invite from `inviter`. */
export function inviteRuleOf(config: Record<string, unknown> | undefined, inviter: string): InviteRule {
  if (!config) return "allow";
  for (const [what, value] of [["users", inviter], ["servers", serverOf(inviter)]] as const) {
    for (const rule of RULES) if (globsOf(config[`${FIELD[rule]}_${what}`]).some((g) => globMatchesWhole(g, value))) return rule;
  }
  return "allow";
}

/** What `invitee` (a local user) says of invites from `inviter` (always "allow" with MSC4155 off). */
export async function inviteRule(s: Services, invitee: string, inviter: string): Promise<InviteRule> {
  if (!s.config.experimental_features.msc4155_enabled || serverOf(invitee) !== s.config.server_name) return "allow";
  const content = await s.accountData.get(invitee, "", INVITE_PERMISSION_CONFIG);
  return inviteRuleOf(isPlainObject(content) ? content : undefined, inviter);
}

/** Refuses an invite of `invitee` by `inviter` that the invitee's filter blocks. */
export async function assertInviteNotBlocked(s: Services, invitee: string, inviter: string): Promise<void> {
  if ((await inviteRule(s, invitee, inviter)) === "block") throw new MatrixError("M_INVITE_BLOCKED", "You are not permitted to invite this user.", 403);
}

/** The same for an invite a local requester makes (by /invite or the state API): server admins may. */
export async function assertLocalInviteAllowed(s: Services, r: Requester, invitee: string): Promise<void> {
  if (!r.isAdmin) await assertInviteNotBlocked(s, invitee, r.userId);
}
