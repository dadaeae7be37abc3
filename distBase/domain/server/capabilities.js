import { KNOWN_ROOM_VERSIONS, getRoomVersion } from "../rooms/room-versions.js";
export function capabilities(s) {
    const { config } = s;
    const available = {};
    for (const id of KNOWN_ROOM_VERSIONS)
        available[id] = getRoomVersion(id)?.stability ?? "unstable";
    return {
        capabilities: {
            // As Synapse: a password can be changed when password auth against the local database is on.
            "m.change_password": { enabled: config.password_config.enabled && config.password_config.localdb_enabled },
            "m.room_versions": { default: config.default_room_version, available },
            "m.set_displayname": { enabled: config.enable_set_displayname },
            "m.set_avatar_url": { enabled: config.enable_set_avatar_url },
            "m.3pid_changes": { enabled: config.enable_3pid_changes },
            "m.get_login_token": { enabled: config.login_via_existing_session.enabled },
        },
    };
}
