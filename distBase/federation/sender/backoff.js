/** The next interval after a failure, given the current one (0: the destination was up). */
export function nextRetryInterval(current, cfg, random = Math.random) {
    if (current <= 0)
        return cfg.destination_min_retry_interval;
    const next = Math.round(current * cfg.destination_retry_multiplier * (0.8 + 0.6 * random()));
    return Math.min(Math.max(next, cfg.destination_min_retry_interval), cfg.destination_max_retry_interval);
}
/** The destination's state after a failed attempt at `now`. */
export function afterFailure(d, now, cfg, random) {
    return { ...d, retryLastTs: now, retryInterval: nextRetryInterval(d.retryInterval, cfg, random), failureTs: d.failureTs ?? now };
}
/** The destination's state after a success at `now`. */
export function afterSuccess(d, now) {
    return { ...d, retryLastTs: 0, retryInterval: 0, failureTs: null, lastSuccessTs: now };
}
/** When the next attempt may go (0: now). */
export function retryAt(d) {
    return d.retryInterval > 0 ? d.retryLastTs + d.retryInterval : 0;
}
export function isDown(d) {
    return d.retryInterval > 0;
}
export function upState(destination) {
    return { destination, retryLastTs: 0, retryInterval: 0, failureTs: null, lastSuccessTs: null };
}
