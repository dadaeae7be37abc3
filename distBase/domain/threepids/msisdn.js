// Phone-number validation requests (spec: POST /register/msisdn/requestToken and
// /account/3pid/msisdn/requestToken). Weft sends no SMS and has no msisdn delegate, so after checking the
// body as Synapse does (parameters, client_secret, a parseable number) it answers as Synapse does without
// `account_threepid_delegates.msisdn`: 400, M_UNKNOWN for registration, M_THREEPID_MEDIUM_NOT_SUPPORTED
// for adding a number. Whether a number is already bound is never looked at, so never told.
import { MatrixError } from "../errors.js";
import { checkClientSecret } from "./email-validation.js";
function param(body, key) {
    const v = body[key];
    if (v === undefined || v === null)
        throw new MatrixError("M_MISSING_PARAM", `Missing params: ['${key}']`, 400);
    return v;
}
function text(body, key) {
    const v = param(body, key);
    if (typeof v !== "string")
        throw new MatrixError("M_BAD_JSON", `${key} must be a string`, 400);
    return v;
}
/** The number as an msisdn (digits, country code first); M_INVALID_PARAM when it cannot be one. */
export function phoneNumberToMsisdn(country, number) {
    const unparseable = () => new MatrixError("M_INVALID_PARAM", "Unable to parse phone number", 400);
    if (!/^[A-Za-z]{2}$/.test(country) || !/^\+?[0-9 ().\-]+$/.test(number.trim()))
        throw unparseable();
    const digits = number.replace(/[^0-9]/g, "");
    if (digits.length < 3 || digits.length > 15)
        throw unparseable();
    return digits;
}
/** Checks the request body, then refuses: this server validates no phone numbers. */
export function requestMsisdnToken(s, purpose, body) {
    if (purpose === "add" && !s.config.enable_3pid_changes)
        throw new MatrixError("M_FORBIDDEN", "3PID changes are disabled on this server", 400);
    for (const key of ["client_secret", "country", "phone_number", "send_attempt"])
        param(body, key);
    checkClientSecret(text(body, "client_secret"));
    const attempt = body.send_attempt;
    if (typeof attempt !== "number" || !Number.isSafeInteger(attempt) || attempt < 0)
        throw new MatrixError("M_INVALID_PARAM", "send_attempt must be a non-negative integer", 400);
    const nextLink = body.next_link;
    if (nextLink !== undefined && nextLink !== null && typeof nextLink !== "string")
        throw new MatrixError("M_BAD_JSON", "next_link must be a string", 400);
    phoneNumberToMsisdn(text(body, "country"), text(body, "phone_number"));
    s.log.warn({ purpose }, "no msisdn account_threepid_delegate is configured: phone numbers cannot be validated");
    if (purpose === "register")
        throw new MatrixError("M_UNKNOWN", "Registration by phone number is not supported on this homeserver", 400);
    throw new MatrixError("M_THREEPID_MEDIUM_NOT_SUPPORTED", "Adding phone numbers to user account is not supported by this homeserver", 400);
}
