// Checks a user's password, counting failures per account against rc_login.failed_attempts.
import { MatrixError } from "../errors.js";
import { verifyPassword } from "./passwords.js";
export async function checkPasswordLogin(s, userId, password, _clientIp) {
    const limit = s.config.rc_login.failed_attempts;
    const key = `login-failed:${userId}`;
    s.ratelimiter.check(key, limit, { update: false });
    if (!s.config.password_config.enabled || !s.config.password_config.localdb_enabled)
        throw new MatrixError("M_FORBIDDEN", "Password login has been disabled", 403);
    const user = await s.users.get(userId);
    const ok = user !== null && !user.deactivated && (await verifyPassword(password, user.passwordHash));
    if (!ok) {
        s.ratelimiter.record(key, limit);
        throw new MatrixError("M_FORBIDDEN", "Invalid username or password", 403);
    }
}
