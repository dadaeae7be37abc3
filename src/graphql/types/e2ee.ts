// GraphQL types of end-to-end encryption (Client-Server API "End-to-End Encryption", "Send-to-Device
// messaging", "Cross-signing", "Server-side key backups"): the envelopes (user and device ids, algorithms,
// counts, versions) typed, the signed key objects, to-device contents and backup session data as JSON
// (their content is open-ended, and clients verify signatures over the exact JSON).
import "reflect-metadata";
import { Field, InputType, Int, ObjectType } from "type-graphql";
import { GraphQLJSON, GraphQLJSONObject } from "./json.ts";

type Json = Record<string, unknown>;

@ObjectType({ description: "How many unclaimed one-time keys of one algorithm the device has on the server." })
export class KeyCount {
  @Field(() => String, { description: "The key algorithm, e.g. signed_curve25519." })
  algorithm!: string;

  @Field(() => Int)
  count!: number;

  static list(counts: Record<string, number>): KeyCount[] {
    return Object.entries(counts).map(([algorithm, count]) => Object.assign(new KeyCount(), { algorithm, count }));
  }
}

@InputType({ description: "What a device publishes (POST /keys/upload): any of its identity keys, one-time keys and fallback keys." })
export class KeysUploadInput {
  @Field(() => GraphQLJSONObject, { nullable: true, description: "The device's signed identity keys (the spec's DeviceKeys: user_id, device_id, algorithms, keys, signatures)." })
  deviceKeys?: Json | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: "One-time keys: `<algorithm>:<key id>` → key (a string or a signed KeyObject)." })
  oneTimeKeys?: Json | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: "Fallback keys: `<algorithm>:<key id>` → signed KeyObject; each replaces the device's previous one of its algorithm." })
  fallbackKeys?: Json | null;
}

@ObjectType({ description: "The result of uploading keys: the device's one-time key counts now." })
export class KeysUploadResult {
  @Field(() => [KeyCount])
  oneTimeKeyCounts!: KeyCount[];
}

@InputType({ description: "Whose keys to query: a user (of this server or another), and some of their devices or all." })
export class KeysQueryUserInput {
  @Field(() => String)
  userId!: string;

  @Field(() => [String], { nullable: true, description: "The devices wanted; null or empty: all of the user's devices." })
  deviceIds?: string[] | null;
}

@ObjectType({ description: "One device's published identity keys." })
export class QueriedDevice {
  @Field(() => String)
  deviceId!: string;

  @Field(() => GraphQLJSONObject, { description: "The signed DeviceKeys object as the device uploaded it, with the signatures the viewer may see and `unsigned.device_display_name` for local users." })
  keys!: Json;
}

@ObjectType({ description: "The keys of one queried user." })
export class UserKeys {
  @Field(() => String)
  userId!: string;

  @Field(() => [QueriedDevice], { description: "The devices asked for that have keys." })
  devices!: QueriedDevice[];

  @Field(() => GraphQLJSONObject, { nullable: true, description: "The user's master cross-signing key (CrossSigningKey), if any." })
  masterKey!: Json | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: "The user's self-signing key, if any." })
  selfSigningKey!: Json | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: "The user-signing key: only ever the viewer's own." })
  userSigningKey!: Json | null;
}

@ObjectType({ description: "A server that could not be asked for its users' keys." })
export class KeyServerFailure {
  @Field(() => String)
  serverName!: string;

  @Field(() => GraphQLJSONObject, { description: "What failed (status and message, as /keys/query's `failures`)." })
  error!: Json;

  static list(failures: Record<string, Json>): KeyServerFailure[] {
    return Object.entries(failures).map(([serverName, error]) => Object.assign(new KeyServerFailure(), { serverName, error }));
  }
}

@ObjectType({ description: "The result of a key query (POST /keys/query)." })
export class KeysQueryResult {
  @Field(() => [UserKeys])
  users!: UserKeys[];

  @Field(() => [KeyServerFailure])
  failures!: KeyServerFailure[];
}

@InputType({ description: "A one-time key to claim: one of `algorithm` for the device." })
export class KeyClaimInput {
  @Field(() => String)
  userId!: string;

  @Field(() => String)
  deviceId!: string;

  @Field(() => String, { description: "e.g. signed_curve25519." })
  algorithm!: string;
}

@ObjectType({ description: "A claimed one-time key (or the device's fallback key when it has none left)." })
export class ClaimedKey {
  @Field(() => String)
  userId!: string;

  @Field(() => String)
  deviceId!: string;

  @Field(() => String, { description: "`<algorithm>:<key id>`." })
  keyId!: string;

  @Field(() => GraphQLJSON, { description: "The key: a signed KeyObject, or a bare key string." })
  key!: unknown;
}

@ObjectType({ description: "The result of claiming one-time keys (POST /keys/claim)." })
export class KeysClaimResult {
  @Field(() => [ClaimedKey], { description: "One per device that had a key of the algorithm asked for." })
  oneTimeKeys!: ClaimedKey[];

  @Field(() => [KeyServerFailure])
  failures!: KeyServerFailure[];
}

@InputType({ description: "A to-device message for one device (`*`: each device of the user)." })
export class ToDeviceMessageInput {
  @Field(() => String)
  userId!: string;

  @Field(() => String, { description: "A device id, or `*` for all of the user's devices." })
  deviceId!: string;

  @Field(() => GraphQLJSONObject, { description: "The message content, relayed unchanged (e.g. an m.room.encrypted Olm payload)." })
  content!: Json;
}

@ObjectType({ description: "A to-device message delivered to the viewer's device." })
export class ToDeviceEvent {
  @Field(() => String)
  sender!: string;

  @Field(() => String)
  type!: string;

  @Field(() => GraphQLJSONObject)
  content!: Json;
}

@ObjectType({ description: "Users whose devices or cross-signing keys changed (changed), or who no longer share an encrypted room with the viewer (left)." })
export class DeviceListChanges {
  @Field(() => [String])
  changed!: string[];

  @Field(() => [String])
  left!: string[];
}

@InputType({ description: "Cross-signing keys to publish (POST /keys/device_signing/upload); each a signed CrossSigningKey." })
export class CrossSigningKeysInput {
  @Field(() => GraphQLJSONObject, { nullable: true })
  masterKey?: Json | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: "Signed by the master key." })
  selfSigningKey?: Json | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: "Signed by the master key." })
  userSigningKey?: Json | null;
}

@InputType({ description: "A key with new signatures (POST /keys/signatures/upload): a device of the viewer, the viewer's master key, or another user's master key." })
export class SignedKeyInput {
  @Field(() => String)
  userId!: string;

  @Field(() => String, { description: "The device id, or the master key's public key." })
  keyId!: string;

  @Field(() => GraphQLJSONObject, { description: "The whole key object with the viewer's new signatures in it." })
  signed!: Json;
}

@ObjectType({ description: "A signature that was refused; the others were stored." })
export class SignatureFailure {
  @Field(() => String)
  userId!: string;

  @Field(() => String)
  keyId!: string;

  @Field(() => String, { description: "M_INVALID_SIGNATURE or M_NOT_FOUND." })
  errcode!: string;

  @Field(() => String)
  error!: string;
}

@ObjectType({ description: "A server-side key backup version." })
export class KeyBackupVersion {
  @Field(() => String)
  version!: string;

  @Field(() => String, { description: "e.g. m.megolm_backup.v1.curve25519-aes-sha2." })
  algorithm!: string;

  @Field(() => GraphQLJSON, { description: "The algorithm's auth data (for v1: the backup's public key and its signatures)." })
  authData!: unknown;

  @Field(() => Int, { description: "How many session keys the backup holds." })
  count!: number;

  @Field(() => String, { description: "Changes whenever the keys in the backup change." })
  etag!: string;
}

/** One type for both directions: what putRoomKeys takes is what roomKeys gives back. */
@ObjectType("BackedUpRoomKey", { description: "A backed-up megolm session key (the spec's KeyBackupData, for a room and session)." })
@InputType("RoomKeyBackupInput", { description: "One megolm session key to back up (the spec's KeyBackupData, for a room and session)." })
export class BackedUpRoomKey {
  @Field(() => String)
  roomId!: string;

  @Field(() => String)
  sessionId!: string;

  @Field(() => Int)
  firstMessageIndex!: number;

  @Field(() => Int)
  forwardedCount!: number;

  @Field(() => Boolean)
  isVerified!: boolean;

  @Field(() => GraphQLJSON, { description: "The encrypted session data (the algorithm's business)." })
  sessionData!: unknown;
}

@ObjectType({ description: "A backup's keys after a change: their number and etag." })
export class RoomKeysUpdate {
  @Field(() => Int)
  count!: number;

  @Field(() => String)
  etag!: string;
}
