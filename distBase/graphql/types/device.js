var __decorate = (this && this.__decorate) || function (decorators, target, key, desc) {
    var c = arguments.length, r = c < 3 ? target : desc === null ? desc = Object.getOwnPropertyDescriptor(target, key) : desc, d;
    if (typeof Reflect === "object" && typeof Reflect.decorate === "function") r = Reflect.decorate(decorators, target, key, desc);
    else for (var i = decorators.length - 1; i >= 0; i--) if (d = decorators[i]) r = (c < 3 ? d(r) : c > 3 ? d(target, key, r) : d(target, key)) || r;
    return c > 3 && r && Object.defineProperty(target, key, r), r;
};
var __metadata = (this && this.__metadata) || function (k, v) {
    if (typeof Reflect === "object" && typeof Reflect.metadata === "function") return Reflect.metadata(k, v);
};
var Device_1;
// GraphQL type of a device: the spec's Device object (Client-Server API "Device management") in camelCase,
// with its end-to-end encryption keys (Client-Server API "End-to-End Encryption", "Cross-signing").
import "reflect-metadata";
import { Field, ObjectType } from "type-graphql";
import { GraphQLJSONObject } from "./json.js";
import { Timestamp } from "./scalars.js";
let DeviceKeys = class DeviceKeys {
    algorithms;
    keys;
    signatures;
};
__decorate([
    Field(() => [String], { description: "The encryption algorithms the device supports." }),
    __metadata("design:type", Array)
], DeviceKeys.prototype, "algorithms", void 0);
__decorate([
    Field(() => GraphQLJSONObject, { description: "Public identity keys: `<algorithm>:<device id>` → key." }),
    __metadata("design:type", Object)
], DeviceKeys.prototype, "keys", void 0);
__decorate([
    Field(() => GraphQLJSONObject, { description: "Signatures: user id → key id → signature (the device's own and cross-signing ones)." }),
    __metadata("design:type", Object)
], DeviceKeys.prototype, "signatures", void 0);
DeviceKeys = __decorate([
    ObjectType({ description: "The identity keys a device published (POST /keys/upload), with the signatures on them." })
], DeviceKeys);
export { DeviceKeys };
let Device = Device_1 = class Device {
    deviceId;
    displayName;
    lastSeenIp;
    lastSeenTs;
    keys;
    crossSigned;
    static from(d, k) {
        return Object.assign(new Device_1(), {
            deviceId: d.device_id,
            displayName: d.display_name ?? null,
            lastSeenIp: d.last_seen_ip ?? null,
            lastSeenTs: d.last_seen_ts ?? null,
            keys: k ? Object.assign(new DeviceKeys(), { algorithms: k.algorithms, keys: k.keys, signatures: k.signatures }) : null,
            crossSigned: k?.crossSigned ?? false,
        });
    }
};
__decorate([
    Field(() => String),
    __metadata("design:type", String)
], Device.prototype, "deviceId", void 0);
__decorate([
    Field(() => String, { nullable: true, description: "The name the user or the client gave this device." }),
    __metadata("design:type", Object)
], Device.prototype, "displayName", void 0);
__decorate([
    Field(() => String, { nullable: true, description: "The address this device was last seen from." }),
    __metadata("design:type", Object)
], Device.prototype, "lastSeenIp", void 0);
__decorate([
    Field(() => Timestamp, { nullable: true, description: "When this device was last seen." }),
    __metadata("design:type", Object)
], Device.prototype, "lastSeenTs", void 0);
__decorate([
    Field(() => DeviceKeys, { nullable: true, description: "The device's end-to-end encryption keys; null until it uploads them." }),
    __metadata("design:type", Object)
], Device.prototype, "keys", void 0);
__decorate([
    Field(() => Boolean, { description: "Whether the user's self-signing key signed this device's keys (verified by the server)." }),
    __metadata("design:type", Boolean)
], Device.prototype, "crossSigned", void 0);
Device = Device_1 = __decorate([
    ObjectType({ description: "A device (a session) of the viewer." })
], Device);
export { Device };
