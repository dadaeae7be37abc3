// The state events that describe a room to someone not in it yet — sent with invites and knocks, to
// clients as stripped state and to an invitee's server as `invite_room_state`. Synapse's default
// `room_prejoin_state` list (the create event first: required since v1.16).
// Spec: Client-Server API "Stripped state"; Server-Server API "Inviting to a room".
export const STRIPPED_STATE_TYPES = [
    "m.room.create",
    "m.room.join_rules",
    "m.room.name",
    "m.room.avatar",
    "m.room.canonical_alias",
    "m.room.encryption",
    "m.room.topic",
];
