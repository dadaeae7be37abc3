// The room version table: one record of feature flags per room version "1".."12". Every rule that differs
// between versions reads a flag from here; nothing else compares version strings.
// Spec: Room Versions (spec.matrix.org/rooms, v1–v12 pages and the feature matrix).
import { MatrixError } from "../errors.js";
const V1 = {
    id: "1",
    stability: "stable",
    eventIdFormat: "server-assigned",
    stateResolution: "v1",
    redaction: "v1",
    redactionKeepsAliases: true,
    redactionKeepsJoinRulesAllow: false,
    redactionKeepsJoinAuthorisedVia: false,
    updatedRedactionRules: false,
    strictCanonicalJson: false,
    floatPowerLevels: true,
    stringPowerLevels: true,
    integerOnlyPowerLevels: false,
    redactsInContent: false,
    createHasCreator: true,
    roomIdIsCreateEventHash: false,
    specialCaseAliasesAuth: true,
    redactionAuthInRules: true,
    enforceKeyValidity: false,
    notificationsPowerLevels: false,
    knock: false,
    restricted: false,
    knockRestricted: false,
    privilegedCreators: false,
    additionalCreators: false,
    createInAuthEvents: true,
};
// Each version is the previous one plus the changes its spec page lists.
const V2 = { ...V1, id: "2", stateResolution: "v2" };
const V3 = { ...V2, id: "3", eventIdFormat: "reference-hash-base64", redactionAuthInRules: false };
const V4 = { ...V3, id: "4", eventIdFormat: "reference-hash-base64url" };
const V5 = { ...V4, id: "5", enforceKeyValidity: true };
const V6 = {
    ...V5,
    id: "6",
    redaction: "v6",
    redactionKeepsAliases: false,
    strictCanonicalJson: true,
    floatPowerLevels: false,
    specialCaseAliasesAuth: false,
    notificationsPowerLevels: true,
};
const V7 = { ...V6, id: "7", knock: true };
const V8 = { ...V7, id: "8", redaction: "v8", redactionKeepsJoinRulesAllow: true, restricted: true };
const V9 = { ...V8, id: "9", redaction: "v9", redactionKeepsJoinAuthorisedVia: true };
const V10 = {
    ...V9,
    id: "10",
    knockRestricted: true,
    stringPowerLevels: false,
    integerOnlyPowerLevels: true,
};
const V11 = {
    ...V10,
    id: "11",
    redaction: "v11",
    updatedRedactionRules: true,
    redactsInContent: true,
    createHasCreator: false,
};
const V12 = {
    ...V11,
    id: "12",
    stateResolution: "v2.1",
    roomIdIsCreateEventHash: true,
    privilegedCreators: true,
    additionalCreators: true,
    createInAuthEvents: false,
};
const TABLE = new Map([V1, V2, V3, V4, V5, V6, V7, V8, V9, V10, V11, V12].map((v) => [v.id, Object.freeze(v)]));
/** The room version new rooms get when the request names none. (The spec now recommends 12.) */
export const DEFAULT_ROOM_VERSION = "11";
/** Every room version this server implements, oldest first. */
export const KNOWN_ROOM_VERSIONS = Object.freeze([...TABLE.keys()]);
/** The flags of a room version, or undefined when the version is unknown. */
export function getRoomVersion(id) {
    return TABLE.get(id);
}
/** Accepts a version id or flags; throws M_UNSUPPORTED_ROOM_VERSION for an unknown id. */
export function resolveRoomVersion(version) {
    if (typeof version !== "string")
        return version;
    const found = TABLE.get(version);
    if (!found)
        throw new MatrixError("M_UNSUPPORTED_ROOM_VERSION", `Unsupported room version: ${version}`);
    return found;
}
/** The `m.room_versions` capability body for /capabilities. */
export function roomVersionsCapability() {
    const available = {};
    for (const v of TABLE.values())
        available[v.id] = v.stability;
    return { default: DEFAULT_ROOM_VERSION, available };
}
