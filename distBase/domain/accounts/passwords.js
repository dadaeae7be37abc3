// Password hashing (scrypt, parameters stored with each hash so the cost can change) and the password
// policy of `password_config.policy` with Synapse's error codes. Spec: "Password management".
import { randomBytes, scrypt as scryptCb, timingSafeEqual } from "node:crypto";
import { MatrixError } from "../errors.js";
function scrypt(password, salt, n, r, p) {
    return new Promise((resolve, reject) => scryptCb(password.normalize("NFKC"), salt, 32, { N: n, r, p, maxmem: 256 * n * r + 1024 * 1024 }, (err, key) => err ? reject(err) : resolve(key)));
}
/** `$scrypt$ln=15,r=8,p=1$<salt b64>$<hash b64>` */
export async function hashPassword(password, logN) {
    const salt = randomBytes(16);
    const key = await scrypt(password, salt, 2 ** logN, 8, 1);
    return `$scrypt$ln=${logN},r=8,p=1$${salt.toString("base64")}$${key.toString("base64")}`;
}
export async function verifyPassword(password, stored) {
    if (!stored)
        return false;
    const m = /^\$scrypt\$ln=(\d+),r=(\d+),p=(\d+)\$([^$]+)\$([^$]+)$/.exec(stored);
    if (!m)
        return false;
    const expected = Buffer.from(m[5], "base64");
    const key = await scrypt(password, Buffer.from(m[4], "base64"), 2 ** Number(m[1]), Number(m[2]), Number(m[3]));
    return key.length === expected.length && timingSafeEqual(key, expected);
}
/** Throws the first policy rule the password breaks (Synapse's order and codes). */
export function checkPasswordPolicy(password, policy) {
    if (!policy.enabled)
        return;
    if (password.length < policy.minimum_length)
        throw new MatrixError("M_PASSWORD_TOO_SHORT", `The password must be at least ${policy.minimum_length} characters long`);
    if (policy.require_digit && !/\d/.test(password))
        throw new MatrixError("M_PASSWORD_NO_DIGIT", "The password must include at least one digit");
    if (policy.require_symbol && !/[^\p{L}\p{N}]/u.test(password))
        throw new MatrixError("M_PASSWORD_NO_SYMBOL", "The password must include at least one symbol");
    if (policy.require_uppercase && !/\p{Lu}/u.test(password))
        throw new MatrixError("M_PASSWORD_NO_UPPERCASE", "The password must include at least one uppercase letter");
    if (policy.require_lowercase && !/\p{Ll}/u.test(password))
        throw new MatrixError("M_PASSWORD_NO_LOWERCASE", "The password must include at least one lowercase letter");
}
