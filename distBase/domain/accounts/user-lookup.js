export async function localUserExists(s, userId) {
    return (await s.users.exists(userId)) || (await askAboutUnknownUser(s, userId));
}
/** Runs the user queries for a local user the caller found unknown; true when it exists now. */
export async function askAboutUnknownUser(s, userId) {
    for (const query of s.extensions.userQueries)
        if (await query(s, userId))
            return true;
    return false;
}
