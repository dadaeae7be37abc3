// End-to-end encryption keys and to-device messages on the GraphQL face, each field over the REST face's
// domain operation (src/domain/e2ee): `uploadKeys`, `queryKeys` (local and remote users), `claimKeys`,
// `sendToDevice`, `acknowledgeToDevice` (what syncUpdates delivered), `uploadCrossSigningKeys` (UIA when replacing keys: the REST 401's flows and session in
// the error's extensions), `uploadSignatures`, and the viewer's `oneTimeKeyCounts` and
// `unusedFallbackKeyTypes`. Delivery of to-device messages, device list changes and key counts is in the
// `syncUpdates` subscription (ephemeral.ts). Spec: Client-Server API "End-to-End Encryption",
// "Send-to-Device messaging", "Cross-signing".
import "reflect-metadata";
import { Arg, Ctx, FieldResolver, Int, Mutation, Query, Resolver, Root } from "type-graphql";
import { GraphQLJSONObject } from "../types/json.ts";
import type { GraphqlContext } from "../context.ts";
import { Viewer } from "../types/viewer.ts";
import {
  ClaimedKey, CrossSigningKeysInput, KeyClaimInput, KeyCount, KeyServerFailure, KeysClaimResult, KeysQueryResult, KeysQueryUserInput,
  KeysUploadInput, KeysUploadResult, QueriedDevice, SignatureFailure, SignedKeyInput, ToDeviceMessageInput, UserKeys,
} from "../types/e2ee.ts";
import { uploadKeys } from "../../domain/e2ee/upload-keys.ts";
import { queryKeys } from "../../domain/e2ee/query-keys.ts";
import { claimKeys } from "../../domain/e2ee/claim-keys.ts";
import { sendToDevice } from "../../domain/e2ee/to-device.ts";
import { uploadCrossSigningKeys } from "../../domain/e2ee/cross-signing.ts";
import { uploadSignatures } from "../../domain/e2ee/signatures.ts";
import { oneTimeKeyCounts, unusedFallbackKeyTypes } from "../../domain/e2ee/sync-data.ts";
import { requireDevice } from "../../domain/e2ee/json.ts";
import { acknowledgeLiveToDevice } from "../../domain/sync/live-sync.ts";

type Json = Record<string, unknown>;

/** The path a UIA session of the cross-signing upload is bound to: the same as REST's, so either face may finish it. */
const CROSS_SIGNING_UIA_PATH = "/_matrix/client/v3/keys/device_signing/upload";

const orUndefined = <T>(v: T | null | undefined): T | undefined => v ?? undefined;

@Resolver(() => Viewer)
export class ViewerKeyCountsResolver {
  @FieldResolver(() => [KeyCount], { description: "The viewer's device's unclaimed one-time keys per algorithm (as /sync's device_one_time_keys_count)." })
  async oneTimeKeyCounts(@Root() viewer: Viewer, @Ctx() ctx: GraphqlContext): Promise<KeyCount[]> {
    return KeyCount.list(await oneTimeKeyCounts(ctx.s, viewer.userId, requireDevice(viewer.requester)));
  }

  @FieldResolver(() => [String], { description: "The algorithms of the viewer's device's fallback keys not yet used (as /sync's device_unused_fallback_key_types)." })
  async unusedFallbackKeyTypes(@Root() viewer: Viewer, @Ctx() ctx: GraphqlContext): Promise<string[]> {
    return unusedFallbackKeyTypes(ctx.s, viewer.userId, requireDevice(viewer.requester));
  }
}

@Resolver()
export class E2eeKeysResolver {
  @Mutation(() => KeysUploadResult, { description: "Publishes the viewer's device's identity keys, one-time keys and fallback keys (POST /keys/upload)." })
  async uploadKeys(@Arg("input", () => KeysUploadInput) input: KeysUploadInput, @Ctx() ctx: GraphqlContext): Promise<KeysUploadResult> {
    const res = await uploadKeys(ctx.s, await ctx.requester(), {
      deviceKeys: orUndefined(input.deviceKeys),
      oneTimeKeys: orUndefined(input.oneTimeKeys),
      fallbackKeys: orUndefined(input.fallbackKeys),
    });
    return Object.assign(new KeysUploadResult(), { oneTimeKeyCounts: KeyCount.list(res.one_time_key_counts) });
  }

  @Query(() => KeysQueryResult, {
    description:
      "The device and cross-signing keys of users, of this server or others (POST /keys/query; other servers are asked " +
      "over federation within `timeoutMs`, default 10 s, and those that fail are listed in `failures`).",
  })
  async queryKeys(
    @Arg("users", () => [KeysQueryUserInput]) users: KeysQueryUserInput[],
    @Arg("timeoutMs", () => Int, { nullable: true }) timeoutMs: number | null,
    @Ctx() ctx: GraphqlContext,
  ): Promise<KeysQueryResult> {
    const deviceKeys = new Map<string, string[]>();
    for (const u of users) deviceKeys.set(u.userId, [...(deviceKeys.get(u.userId) ?? []), ...(u.deviceIds ?? [])]);
    const res = await queryKeys(ctx.s, await ctx.requester(), { deviceKeys, timeout: orUndefined(timeoutMs) });
    const ids = new Set([...Object.keys(res.device_keys), ...Object.keys(res.master_keys), ...Object.keys(res.self_signing_keys), ...Object.keys(res.user_signing_keys)]);
    return Object.assign(new KeysQueryResult(), {
      users: [...ids].map((userId) =>
        Object.assign(new UserKeys(), {
          userId,
          devices: Object.entries(res.device_keys[userId] ?? {}).map(([deviceId, keys]) => Object.assign(new QueriedDevice(), { deviceId, keys })),
          masterKey: res.master_keys[userId] ?? null,
          selfSigningKey: res.self_signing_keys[userId] ?? null,
          userSigningKey: res.user_signing_keys[userId] ?? null,
        }),
      ),
      failures: KeyServerFailure.list(res.failures),
    });
  }

  @Mutation(() => KeysClaimResult, {
    description:
      "Claims one-time keys of devices, to start Olm sessions with them (POST /keys/claim): each key is given out once; " +
      "a device with none left gives its fallback key. Users of other servers are claimed from their servers within `timeoutMs`.",
  })
  async claimKeys(
    @Arg("claims", () => [KeyClaimInput]) claims: KeyClaimInput[],
    @Arg("timeoutMs", () => Int, { nullable: true }) timeoutMs: number | null,
    @Ctx() ctx: GraphqlContext,
  ): Promise<KeysClaimResult> {
    await ctx.requester();
    const res = await claimKeys(ctx.s, { claims: claims.map((c) => ({ userId: c.userId, deviceId: c.deviceId, algorithm: c.algorithm })), timeout: orUndefined(timeoutMs) });
    const oneTimeKeys: ClaimedKey[] = [];
    for (const [userId, devices] of Object.entries(res.one_time_keys))
      for (const [deviceId, keys] of Object.entries(devices))
        for (const [keyId, key] of Object.entries(keys)) oneTimeKeys.push(Object.assign(new ClaimedKey(), { userId, deviceId, keyId, key }));
    return Object.assign(new KeysClaimResult(), { oneTimeKeys, failures: KeyServerFailure.list(res.failures) });
  }

  @Mutation(() => Boolean, {
    description:
      "Sends to-device messages of `eventType` (PUT /sendToDevice/{eventType}/{txnId}): the same txnId from the same device " +
      "sends nothing again (REST's transaction ids too). Messages to unknown devices are dropped, as the spec allows.",
  })
  async sendToDevice(
    @Arg("eventType", () => String) eventType: string,
    @Arg("txnId", () => String, { description: "The client's transaction ID, unique per device." }) txnId: string,
    @Arg("messages", () => [ToDeviceMessageInput]) messages: ToDeviceMessageInput[],
    @Ctx() ctx: GraphqlContext,
  ): Promise<boolean> {
    await sendToDevice(ctx.s, await ctx.requester(), eventType, txnId, messages.map((m) => ({ userId: m.userId, deviceId: m.deviceId, content: m.content })));
    return true;
  }

  @Mutation(() => Boolean, {
    description:
      "Acknowledges the to-device messages syncUpdates delivered up to `upTo` (an update's `nextBatch`): they are deleted " +
      "on the server, as a /sync from that token would. Until then a subscription from an older position delivers them again.",
  })
  async acknowledgeToDevice(@Arg("upTo", () => String) upTo: string, @Ctx() ctx: GraphqlContext): Promise<boolean> {
    await acknowledgeLiveToDevice(ctx.s, await ctx.requester(), upTo);
    return true;
  }

  @Mutation(() => Boolean, {
    description:
      "Publishes the viewer's cross-signing keys (POST /keys/device_signing/upload). The first upload needs no further " +
      "authentication; replacing keys does: without `auth` (or with a stage still missing) the error is REST's 401 — " +
      "errcode M_UNAUTHORIZED (or the failed stage's) with `flows`, `params`, `session` and `completed` in its extensions; " +
      "repeat the mutation with `auth` (the UIA auth dict, e.g. m.login.password with that `session`).",
  })
  async uploadCrossSigningKeys(
    @Arg("keys", () => CrossSigningKeysInput) keys: CrossSigningKeysInput,
    @Arg("auth", () => GraphQLJSONObject, { nullable: true, description: "The user-interactive authentication dict (type, session and the stage's fields)." }) auth: Json | null,
    @Ctx() ctx: GraphqlContext,
  ): Promise<boolean> {
    const r = await ctx.requester();
    const body = auth ? { auth } : {};
    await uploadCrossSigningKeys(
      ctx.s,
      r,
      { master: orUndefined(keys.masterKey), self_signing: orUndefined(keys.selfSigningKey), user_signing: orUndefined(keys.userSigningKey) },
      { path: CROSS_SIGNING_UIA_PATH, method: "POST", body, clientIp: ctx.clientIp },
    );
    return true;
  }

  @Mutation(() => [SignatureFailure], {
    description:
      "Uploads signatures (POST /keys/signatures/upload): of the viewer's devices by their self-signing key, of their master " +
      "key by their devices, of other users' master keys by their user-signing key. Returns the refused ones; the rest are stored.",
  })
  async uploadSignatures(@Arg("signatures", () => [SignedKeyInput]) signatures: SignedKeyInput[], @Ctx() ctx: GraphqlContext): Promise<SignatureFailure[]> {
    const input = new Map<string, Map<string, Json>>();
    for (const sig of signatures) {
      let m = input.get(sig.userId);
      if (!m) input.set(sig.userId, (m = new Map()));
      m.set(sig.keyId, sig.signed);
    }
    const res = await uploadSignatures(ctx.s, await ctx.requester(), input);
    return Object.entries(res.failures).flatMap(([userId, byKey]) =>
      Object.entries(byKey).map(([keyId, f]) => Object.assign(new SignatureFailure(), { userId, keyId, errcode: f.errcode, error: f.error })),
    );
  }
}
