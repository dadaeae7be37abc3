// GraphQL type of a device: the spec's Device object (Client-Server API "Device management") in camelCase,
// with its end-to-end encryption keys (Client-Server API "End-to-End Encryption", "Cross-signing").
import "reflect-metadata";
import { Field, ObjectType } from "type-graphql";
import { GraphQLJSONObject } from "./json.ts";
import type { ClientDevice } from "../../domain/devices/device-info.ts";
import type { DeviceKeyInfo } from "../../domain/e2ee/device-key-info.ts";
import { Timestamp } from "./scalars.ts";

@ObjectType({ description: "The identity keys a device published (POST /keys/upload), with the signatures on them." })
export class DeviceKeys {
  @Field(() => [String], { description: "The encryption algorithms the device supports." })
  algorithms!: string[];

  @Field(() => GraphQLJSONObject, { description: "Public identity keys: `<algorithm>:<device id>` → key." })
  keys!: Record<string, string>;

  @Field(() => GraphQLJSONObject, { description: "Signatures: user id → key id → signature (the device's own and cross-signing ones)." })
  signatures!: Record<string, Record<string, string>>;
}

@ObjectType({ description: "A device (a session) of the viewer." })
export class Device {
  @Field(() => String)
  deviceId!: string;

  @Field(() => String, { nullable: true, description: "The name the user or the client gave this device." })
  displayName!: string | null;

  @Field(() => String, { nullable: true, description: "The address this device was last seen from." })
  lastSeenIp!: string | null;

  @Field(() => Timestamp, { nullable: true, description: "When this device was last seen." })
  lastSeenTs!: number | null;

  @Field(() => DeviceKeys, { nullable: true, description: "The device's end-to-end encryption keys; null until it uploads them." })
  keys!: DeviceKeys | null;

  @Field(() => Boolean, { description: "Whether the user's self-signing key signed this device's keys (verified by the server)." })
  crossSigned!: boolean;

  static from(d: ClientDevice, k?: DeviceKeyInfo): Device {
    return Object.assign(new Device(), {
      deviceId: d.device_id,
      displayName: d.display_name ?? null,
      lastSeenIp: d.last_seen_ip ?? null,
      lastSeenTs: d.last_seen_ts ?? null,
      keys: k ? Object.assign(new DeviceKeys(), { algorithms: k.algorithms, keys: k.keys, signatures: k.signatures }) : null,
      crossSigned: k?.crossSigned ?? false,
    });
  }
}
