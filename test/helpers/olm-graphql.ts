// A Matrix crypto client for the tests whose only transport is GraphQL: matrix-sdk-crypto-wasm's OlmMachine
// (the crypto of matrix-js-sdk and Element Web), each outgoing request type mapped to a GraphQL operation
// (KeysUpload → uploadKeys, KeysQuery → queryKeys, KeysClaim → claimKeys, ToDevice → sendToDevice,
// SignatureUpload → uploadSignatures, KeysBackup → putRoomKeys, RoomMessage → sendMessage) and its answer
// turned back into the REST response the machine expects; the syncUpdates subscription's to-device
// messages, device list changes and one-time key counts fed to receiveSyncChanges, and the messages
// acknowledged (acknowledgeToDevice) once handled. Waits are on
// conditions re-checked after each subscription update, with a bounded timeout.
import * as wasm from "@matrix-org/matrix-sdk-crypto-wasm";
import type { Client } from "graphql-ws";
import type { TestServer } from "./server.ts";
import { gql, wsClient } from "../graphql/client.ts";

type Json = Record<string, any>;

export const WAIT_MS = 20000;

export const SYNC = `subscription ($since: String) {
  syncUpdates(since: $since) {
    nextBatch
    toDevice { sender type content }
    deviceLists { changed left }
    oneTimeKeyCounts { algorithm count }
    unusedFallbackKeyTypes
    joinedRooms { roomId timeline { eventId type sender content originServerTs unsigned stateKey } }
  }
}`;

const UPLOAD = `mutation ($input: KeysUploadInput!) { uploadKeys(input: $input) { oneTimeKeyCounts { algorithm count } } }`;
const QUERY = `query ($users: [KeysQueryUserInput!]!, $timeoutMs: Int) {
  queryKeys(users: $users, timeoutMs: $timeoutMs) {
    users { userId devices { deviceId keys } masterKey selfSigningKey userSigningKey }
    failures { serverName error }
  }
}`;
const CLAIM = `mutation ($claims: [KeyClaimInput!]!, $timeoutMs: Int) {
  claimKeys(claims: $claims, timeoutMs: $timeoutMs) { oneTimeKeys { userId deviceId keyId key } failures { serverName error } }
}`;
const TO_DEVICE = `mutation ($eventType: String!, $txnId: String!, $messages: [ToDeviceMessageInput!]!) {
  sendToDevice(eventType: $eventType, txnId: $txnId, messages: $messages)
}`;
const SIGNATURES = `mutation ($signatures: [SignedKeyInput!]!) { uploadSignatures(signatures: $signatures) { userId keyId errcode error } }`;
const PUT_ROOM_KEYS = `mutation ($version: String!, $keys: [RoomKeyBackupInput!]!) { putRoomKeys(version: $version, keys: $keys) { etag count } }`;
const SEND = `mutation ($roomId: String!, $type: String!, $content: JSONObject!, $txnId: String!) {
  sendMessage(roomId: $roomId, type: $type, content: $content, txnId: $txnId) { eventId }
}`;
export const CROSS_SIGNING = `mutation ($keys: CrossSigningKeysInput!, $auth: JSONObject) { uploadCrossSigningKeys(keys: $keys, auth: $auth) }`;

export interface TimelineEvent {
  event_id: string;
  type: string;
  sender: string;
  content: Json;
  origin_server_ts: number;
  room_id: string;
  unsigned?: Json;
}

let txnCounter = 0;

/** One logged-in device with an OlmMachine, talking to the server over GraphQL only. */
export class GraphqlCryptoPeer {
  readonly events: TimelineEvent[] = [];
  /** Every to-device message received, decrypted (for reading what arrived). */
  readonly toDevice: Json[] = [];
  /** The device list changes each subscription update carried. */
  readonly deviceLists: { changed: string[]; left: string[] }[] = [];
  /** The one-time key counts (signed_curve25519) each subscription update carried. */
  readonly otkCounts: number[] = [];
  /** What each operation name was used for (the test checks every request type went over GraphQL). */
  readonly sent = new Map<string, number>();
  private ws: Client | undefined;
  private stopSub: (() => void) | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private listeners = new Set<() => void>();
  private failure: unknown;
  updates = 0;

  private constructor(readonly t: TestServer, readonly userId: string, readonly deviceId: string, readonly token: string, readonly machine: wasm.OlmMachine) {}

  static async start(t: TestServer, session: { userId: string; deviceId: string; accessToken: string }): Promise<GraphqlCryptoPeer> {
    await wasm.initAsync();
    const machine = await wasm.OlmMachine.initialize(new wasm.UserId(session.userId), new wasm.DeviceId(session.deviceId));
    const p = new GraphqlCryptoPeer(t, session.userId, session.deviceId, session.accessToken, machine);
    await p.flush();
    p.subscribe();
    return p;
  }

  /** Runs a GraphQL operation as this device; throws on any error. */
  async gql(query: string, variables?: Json): Promise<Json> {
    const r = await gql(this.t, query, variables, this.token);
    if (r.body.errors) throw new Error(`GraphQL error: ${JSON.stringify(r.body.errors)}`);
    return r.body.data;
  }

  /** Runs `f` after everything queued before it (machine calls are serialized, as a client's sync loop does). */
  private serial<T>(f: () => Promise<T>): Promise<T> {
    const next = this.queue.then(f, f);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private subscribe(): void {
    this.ws = wsClient(this.t, { authorization: `Bearer ${this.token}` });
    this.stopSub = this.ws.subscribe<any>({ query: SYNC, variables: {} }, {
      next: (r) => {
        if (r.errors) {
          this.failure = new Error(JSON.stringify(r.errors));
          this.notify();
          return;
        }
        void this.serial(() => this.receive(r.data!.syncUpdates)).then(
          () => this.notify(),
          (e) => { this.failure = e; this.notify(); },
        );
      },
      error: (e) => { this.failure = e; this.notify(); },
      complete: () => undefined,
    });
  }

  private notify(): void {
    for (const l of [...this.listeners]) l();
  }

  private async receive(u: Json): Promise<void> {
    this.updates++;
    for (const room of u.joinedRooms)
      for (const e of room.timeline)
        this.events.push({ event_id: e.eventId, type: e.type, sender: e.sender, content: e.content, origin_server_ts: e.originServerTs, room_id: room.roomId, ...(e.unsigned ? { unsigned: e.unsigned } : {}) });
    this.deviceLists.push(u.deviceLists);
    const lists = new wasm.DeviceLists(u.deviceLists.changed.map((x: string) => new wasm.UserId(x)), u.deviceLists.left.map((x: string) => new wasm.UserId(x)));
    const counts = new Map<string, number>(u.oneTimeKeyCounts.map((c: Json) => [c.algorithm, c.count]));
    this.otkCounts.push(counts.get("signed_curve25519") ?? 0);
    const processed = await this.machine.receiveSyncChanges(JSON.stringify(u.toDevice), lists, counts, u.unusedFallbackKeyTypes ? new Set(u.unusedFallbackKeyTypes) : undefined);
    for (const p of processed) this.toDevice.push(JSON.parse(p.rawEvent));
    // Handled: the server may delete them (as the next /sync's since would tell it).
    if (u.toDevice.length > 0) await this.gql(`mutation ($upTo: String!) { acknowledgeToDevice(upTo: $upTo) }`, { upTo: u.nextBatch });
    await this.sendOutgoing();
  }

  /** Sends every outgoing request of the machine (and those they give rise to). */
  flush(): Promise<void> {
    return this.serial(() => this.sendOutgoing());
  }

  private async sendOutgoing(): Promise<void> {
    for (let round = 0; round < 10; round++) {
      const reqs = await this.machine.outgoingRequests();
      if (reqs.length === 0) return;
      for (const req of reqs) await this.machine.markRequestAsSent(req.id!, req.type, JSON.stringify(await this.send(req)));
    }
  }

  private count(op: string): void {
    this.sent.set(op, (this.sent.get(op) ?? 0) + 1);
  }

  /** Sends one outgoing request over GraphQL and returns the REST-shaped answer the machine expects. */
  async send(req: { type: wasm.RequestType; body?: string } & Json): Promise<Json> {
    const body = req.body !== undefined ? JSON.parse(req.body) : {};
    switch (req.type) {
      case wasm.RequestType.KeysUpload: {
        this.count("uploadKeys");
        const d = await this.gql(UPLOAD, { input: { deviceKeys: body.device_keys ?? null, oneTimeKeys: body.one_time_keys ?? null, fallbackKeys: body.fallback_keys ?? null } });
        return { one_time_key_counts: Object.fromEntries(d.uploadKeys.oneTimeKeyCounts.map((c: Json) => [c.algorithm, c.count])) };
      }
      case wasm.RequestType.KeysQuery: {
        this.count("queryKeys");
        const users = Object.entries(body.device_keys as Record<string, string[]>).map(([userId, deviceIds]) => ({ userId, deviceIds }));
        const d = (await this.gql(QUERY, { users, timeoutMs: body.timeout ?? null })).queryKeys;
        const out: Json = { device_keys: {}, master_keys: {}, self_signing_keys: {}, user_signing_keys: {}, failures: {} };
        for (const u of d.users) {
          out.device_keys[u.userId] = Object.fromEntries(u.devices.map((x: Json) => [x.deviceId, x.keys]));
          if (u.masterKey) out.master_keys[u.userId] = u.masterKey;
          if (u.selfSigningKey) out.self_signing_keys[u.userId] = u.selfSigningKey;
          if (u.userSigningKey) out.user_signing_keys[u.userId] = u.userSigningKey;
        }
        for (const f of d.failures) out.failures[f.serverName] = f.error;
        return out;
      }
      case wasm.RequestType.KeysClaim: {
        this.count("claimKeys");
        const claims = Object.entries(body.one_time_keys as Record<string, Record<string, string>>).flatMap(([userId, devices]) =>
          Object.entries(devices).map(([deviceId, algorithm]) => ({ userId, deviceId, algorithm })),
        );
        const d = (await this.gql(CLAIM, { claims, timeoutMs: body.timeout ?? null })).claimKeys;
        const one_time_keys: Json = {};
        for (const k of d.oneTimeKeys) ((one_time_keys[k.userId] ??= {})[k.deviceId] ??= {})[k.keyId] = k.key;
        return { one_time_keys, failures: Object.fromEntries(d.failures.map((f: Json) => [f.serverName, f.error])) };
      }
      case wasm.RequestType.ToDevice: {
        this.count("sendToDevice");
        const messages = Object.entries(body.messages as Record<string, Record<string, Json>>).flatMap(([userId, devices]) =>
          Object.entries(devices).map(([deviceId, content]) => ({ userId, deviceId, content })),
        );
        await this.gql(TO_DEVICE, { eventType: req.event_type, txnId: req.txn_id, messages });
        return {};
      }
      case wasm.RequestType.SignatureUpload: {
        this.count("uploadSignatures");
        const signatures = Object.entries(body as Record<string, Record<string, Json>>).flatMap(([userId, keys]) =>
          Object.entries(keys).map(([keyId, signed]) => ({ userId, keyId, signed })),
        );
        const d = await this.gql(SIGNATURES, { signatures });
        const failures: Json = {};
        for (const f of d.uploadSignatures) (failures[f.userId] ??= {})[f.keyId] = { errcode: f.errcode, error: f.error };
        return { failures };
      }
      case wasm.RequestType.KeysBackup: {
        this.count("putRoomKeys");
        const keys = Object.entries(body.rooms as Record<string, { sessions: Record<string, Json> }>).flatMap(([roomId, room]) =>
          Object.entries(room.sessions).map(([sessionId, k]) => ({
            roomId, sessionId, firstMessageIndex: k.first_message_index, forwardedCount: k.forwarded_count, isVerified: k.is_verified, sessionData: k.session_data,
          })),
        );
        return (await this.gql(PUT_ROOM_KEYS, { version: req.version, keys })).putRoomKeys;
      }
      case wasm.RequestType.RoomMessage: {
        this.count("sendMessage");
        const d = await this.gql(SEND, { roomId: req.room_id, type: req.event_type, content: body, txnId: req.txn_id });
        return { event_id: d.sendMessage.eventId };
      }
      default:
        throw new Error(`request type ${req.type} has no GraphQL mapping`);
    }
  }

  /** Sends a request the machine handed out directly (shareRoomKey, verification ...) and marks it sent. */
  sendAndMark(req: { id?: string; type: wasm.RequestType; body?: string } & Json): Promise<void> {
    return this.serial(async () => {
      const res = await this.send(req);
      if (req.id) await this.machine.markRequestAsSent(req.id, req.type, JSON.stringify(res));
      await this.sendOutgoing();
    });
  }

  /** Publishes cross-signing keys as bootstrapCrossSigning hands them out, over GraphQL (with `auth` when given). */
  async uploadCrossSigning(req: wasm.UploadSigningKeysRequest, auth?: Json): Promise<Json> {
    this.count("uploadCrossSigningKeys");
    const b = JSON.parse(req.body);
    const r = await gql(this.t, CROSS_SIGNING, { keys: { masterKey: b.master_key ?? null, selfSigningKey: b.self_signing_key ?? null, userSigningKey: b.user_signing_key ?? null }, auth: auth ?? null }, this.token);
    return r.body;
  }

  /** Resolves with `probe`'s first defined value, re-checked after each subscription update handled. */
  waitFor<T>(probe: () => T | undefined | Promise<T | undefined>, what: string, ms = WAIT_MS): Promise<T> {
    return new Promise((resolve, reject) => {
      let done = false;
      let running = false;
      const finish = (err: unknown, v?: T) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        this.listeners.delete(check);
        if (err) reject(err);
        else resolve(v as T);
      };
      const check = () => {
        if (this.failure) return finish(this.failure);
        if (running) return;
        running = true;
        void this.serial(async () => probe()).then(
          (v) => { running = false; if (v !== undefined) finish(undefined, v); },
          (e) => { running = false; finish(e); },
        );
      };
      const timer = setTimeout(() => finish(new Error(`timed out waiting for ${what}`)), ms);
      this.listeners.add(check);
      check();
    });
  }

  /** The event `eventId` once it came through the subscription. */
  event(eventId: string): Promise<TimelineEvent> {
    return this.waitFor(() => this.events.find((e) => e.event_id === eventId), `event ${eventId}`);
  }

  /** The decrypted content of the encrypted event, once its room key arrived. */
  async decrypted(roomId: string, eventId: string): Promise<Json> {
    const ev = await this.event(eventId);
    return this.waitFor(async () => {
      try {
        const d = await this.machine.decryptRoomEvent(JSON.stringify(ev), new wasm.RoomId(roomId), new wasm.DecryptionSettings(wasm.TrustRequirement.Untrusted));
        return JSON.parse(d.event).content as Json;
      } catch {
        return undefined; // the room key has not arrived yet
      }
    }, `event ${eventId} decrypted`);
  }

  /** Encrypts `body` for the room's members (sharing the room key to their devices first) and sends it. */
  async sendEncrypted(roomId: string, members: string[], body: string): Promise<string> {
    const users = () => members.map((m) => new wasm.UserId(m));
    await this.machine.updateTrackedUsers(users());
    await this.flush();
    const claim = await this.machine.getMissingSessions(users());
    if (claim) await this.sendAndMark(claim);
    for (const r of await this.machine.shareRoomKey(new wasm.RoomId(roomId), users(), new wasm.EncryptionSettings())) await this.sendAndMark(r);
    const content = await this.machine.encryptRoomEvent(new wasm.RoomId(roomId), "m.room.message", JSON.stringify({ msgtype: "m.text", body }));
    const d = await this.gql(SEND, { roomId, type: "m.room.encrypted", content: JSON.parse(content), txnId: `olm${++txnCounter}` });
    this.count("sendMessage");
    return d.sendMessage.eventId;
  }

  async close(): Promise<void> {
    this.stopSub?.();
    await this.ws?.dispose();
    await this.queue;
    this.machine.close();
  }
}
