// Synapse's `server_notices` section: the system user that sends server notices (its localpart, display
// name and avatar) and the room it sends them in (name, avatar, topic, whether users join it at once).
// Absent, server notices are off. Synapse's defaults: room_name "Server Notices", auto_join false.
import { ConfigError } from "./errors.ts";
import type { Reader } from "./config.ts";

export interface ServerNoticesSection {
  /** `@<system_mxid_localpart>:<server_name>`. */
  system_mxid: string;
  system_mxid_display_name?: string;
  system_mxid_avatar_url?: string;
  room_name?: string;
  room_avatar_url?: string;
  room_topic?: string;
  auto_join: boolean;
}

export interface ServerNoticesConfig {
  server_notices?: ServerNoticesSection;
}

/** An optional string where "" means unset (Synapse's Complement config writes system_mxid_avatar_url: ""). */
function text(r: Reader, key: string): string | undefined {
  const v = r.value(key);
  if (v === undefined || v === null || v === "") return undefined;
  if (typeof v !== "string") throw new ConfigError(`server_notices.${key}`, "must be a string");
  return v;
}

export function readServerNoticesConfig(r: Reader, serverName: string): ServerNoticesConfig {
  if (!r.has("server_notices")) return {};
  const n = r.section("server_notices");
  const localpart = n.string("system_mxid_localpart");
  if (!/^[\x21-\x39\x3B-\x7E]+$/.test(localpart)) throw new ConfigError("server_notices.system_mxid_localpart", `"${localpart}" is not a user id localpart`);
  return {
    server_notices: {
      system_mxid: `@${localpart}:${serverName}`,
      system_mxid_display_name: text(n, "system_mxid_display_name"),
      system_mxid_avatar_url: text(n, "system_mxid_avatar_url"),
      room_name: n.has("room_name") ? text(n, "room_name") : "Server Notices",
      room_avatar_url: text(n, "room_avatar_url"),
      room_topic: text(n, "room_topic"),
      auto_join: n.bool("auto_join", false),
    },
  };
}
