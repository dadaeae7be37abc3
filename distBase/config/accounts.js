// Options of server-side account features, with Synapse's names and defaults: rooms new users join
// (auto_join_rooms and its autocreate options), account validity (expiry and renewal), the server support
// contacts served at /.well-known/matrix/support (Weft's `support` section, plus Synapse's admin_contact),
// and dummy_events_threshold. Spec: Client-Server API "Server support discovery".
import { ConfigError } from "./errors.js";
const PRESETS = ["public_chat", "private_chat", "trusted_private_chat"];
export function readAccountsConfig(r) {
    const rooms = r.list("auto_join_rooms").map((v, i) => {
        if (typeof v !== "string" || !/^[#!][^:]+:.+$/.test(v))
            throw new ConfigError(`auto_join_rooms[${i}]`, "must be a room alias (#name:server) or room id");
        return v;
    });
    const preset = r.string("autocreate_auto_join_room_preset", "public_chat");
    if (!PRESETS.includes(preset))
        throw new ConfigError("autocreate_auto_join_room_preset", `must be one of ${PRESETS.join(", ")}`);
    const av = r.section("account_validity");
    const enabled = av.bool("enabled", false);
    const period = av.duration("period");
    if (enabled && period === undefined)
        throw new ConfigError("account_validity.period", "is required when account validity is enabled");
    return {
        auto_join_rooms: rooms,
        autocreate_auto_join_rooms: r.bool("autocreate_auto_join_rooms", true),
        autocreate_auto_join_rooms_federated: r.bool("autocreate_auto_join_rooms_federated", true),
        autocreate_auto_join_room_preset: preset,
        auto_join_mxid_localpart: r.optString("auto_join_mxid_localpart"),
        auto_join_rooms_for_guests: r.bool("auto_join_rooms_for_guests", true),
        account_validity: { enabled, period: period ?? 0, renew_at: av.duration("renew_at"), renew_email_subject: av.string("renew_email_subject", "Renew your %(app)s account") },
        support: readSupport(r),
        dummy_events_threshold: r.number("dummy_events_threshold", 10, { min: 1, integer: true }),
    };
}
function readSupport(r) {
    const contacts = [];
    const sup = r.section("support");
    sup.list("contacts").forEach((c, i) => {
        const name = `support.contacts[${i}]`;
        if (typeof c !== "object" || c === null || Array.isArray(c))
            throw new ConfigError(name, "must be a mapping with role and matrix_id or email_address");
        const { role, matrix_id, email_address } = c;
        if (typeof role !== "string" || role === "")
            throw new ConfigError(`${name}.role`, "is required (m.role.admin, m.role.security or a namespaced role)");
        if (matrix_id !== undefined && (typeof matrix_id !== "string" || !/^@[^:]+:.+$/.test(matrix_id)))
            throw new ConfigError(`${name}.matrix_id`, "must be a user id");
        if (email_address !== undefined && typeof email_address !== "string")
            throw new ConfigError(`${name}.email_address`, "must be a string");
        if (matrix_id === undefined && email_address === undefined)
            throw new ConfigError(name, "needs matrix_id or email_address");
        contacts.push({ role, ...(matrix_id !== undefined ? { matrix_id } : {}), ...(email_address !== undefined ? { email_address } : {}) });
    });
    // Synapse's admin_contact ("mailto:admin@example.com"): an admin contact when the section names none.
    const adminContact = r.optString("admin_contact");
    if (adminContact !== undefined && !contacts.some((c) => c.role === "m.role.admin"))
        contacts.push({ role: "m.role.admin", email_address: adminContact.replace(/^mailto:/, "") });
    const page = sup.optString("support_page");
    if (page !== undefined) {
        try {
            new URL(page);
        }
        catch {
            throw new ConfigError("support.support_page", "must be a URL");
        }
    }
    if (contacts.length === 0 && page === undefined)
        return undefined;
    return { contacts, ...(page !== undefined ? { support_page: page } : {}) };
}
