// GraphQL type of a device: the spec's Device object (Client-Server API "Device management") in camelCase.
import "reflect-metadata";
import { Field, ObjectType } from "type-graphql";
import type { ClientDevice } from "../../domain/devices/device-info.ts";
import { Timestamp } from "./scalars.ts";

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

  static from(d: ClientDevice): Device {
    return Object.assign(new Device(), {
      deviceId: d.device_id,
      displayName: d.display_name ?? null,
      lastSeenIp: d.last_seen_ip ?? null,
      lastSeenTs: d.last_seen_ts ?? null,
    });
  }
}
