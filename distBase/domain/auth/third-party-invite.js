// Third-party invites in the auth rules: an `m.room.member` invite carrying `third_party_invite` (the signed
// mxid/token checked against the public keys of the matching `m.room.third_party_invite` event), and the
// rule for sending `m.room.third_party_invite` events (invite level).
// Spec: Room Versions "Authorisation rules" (member invite sub-rule 1, third_party_invite rule);
// Server-Server API "Third-party invites".
import { ED25519, verifyJsonSignature } from "../signing.js";
import { forbid, isPlainObject } from "./context.js";
import { stateLevel, userPowerLevel } from "./power-levels.js";
/** The public keys an `m.room.third_party_invite` content offers: `public_key` and `public_keys[].public_key`. */
export function thirdPartyInvitePublicKeys(content) {
    const keys = [];
    if (typeof content["public_key"] === "string")
        keys.push(content["public_key"]);
    const list = content["public_keys"];
    if (Array.isArray(list)) {
        for (const entry of list)
            if (isPlainObject(entry) && typeof entry["public_key"] === "string")
                keys.push(entry["public_key"]);
    }
    return keys;
}
/** The token of a member event's third-party invite (`content.third_party_invite.signed.token`). */
export function thirdPartyInviteToken(content) {
    const tpi = content["third_party_invite"];
    if (!isPlainObject(tpi))
        return undefined;
    const signed = tpi["signed"];
    if (!isPlainObject(signed))
        return undefined;
    return typeof signed["token"] === "string" ? signed["token"] : undefined;
}
/**
 * Does any ed25519 signature in `signed` (the `third_party_invite.signed` object) verify with `publicKey`
 * (unpadded base64)? The default `verifyThirdPartyInviteSignature` for callers holding no other policy.
 */
export function verifyThirdPartyInviteSigned(signed, publicKey) {
    const signatures = signed["signatures"];
    if (!isPlainObject(signatures))
        return false;
    for (const [signer, keys] of Object.entries(signatures)) {
        if (!isPlainObject(keys))
            continue;
        for (const keyId of Object.keys(keys)) {
            if (keyId.startsWith(ED25519 + ":") && verifyJsonSignature(signed, signer, keyId, publicKey))
                return true;
        }
    }
    return false;
}
/** Member invite with `content.third_party_invite`: allowed or throws. */
export function checkThirdPartyInviteMembership(ctx, target) {
    const { event } = ctx;
    if (ctx.membershipOf(target) === "ban")
        forbid("member.third_party_invite.target_banned", "the target is banned");
    const tpi = event.content["third_party_invite"];
    const signed = isPlainObject(tpi) ? tpi["signed"] : undefined;
    if (!isPlainObject(signed))
        forbid("member.third_party_invite.signed", "third_party_invite has no signed object");
    const mxid = signed["mxid"];
    const token = signed["token"];
    if (typeof mxid !== "string" || typeof token !== "string") {
        forbid("member.third_party_invite.mxid_token", "signed needs mxid and token");
    }
    if (mxid !== target)
        forbid("member.third_party_invite.mxid", "signed.mxid does not match the state_key");
    const invite = ctx.get("m.room.third_party_invite", token);
    if (!invite)
        forbid("member.third_party_invite.no_invite", "no m.room.third_party_invite event for this token");
    if (invite.sender !== event.sender)
        forbid("member.third_party_invite.sender", "the sender did not send the third-party invite");
    const verify = ctx.options.verifyThirdPartyInviteSignature;
    if (verify && thirdPartyInvitePublicKeys(invite.content).some((key) => verify(signed, key)))
        return;
    forbid("member.third_party_invite.signature", "no signature in signed matches the invite's public keys");
}
/** Rule "If type is m.room.third_party_invite": allowed iff the sender's level ≥ the invite level. */
export function checkThirdPartyInviteEvent(ctx) {
    if (userPowerLevel(ctx, ctx.event.sender) >= stateLevel(ctx, "invite"))
        return;
    forbid("third_party_invite.power", "the sender's power level is below the invite level");
}
