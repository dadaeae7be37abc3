// Which Node versions Weft runs on (package.json's engines say the same): the launcher asks before it
// loads anything else, so an older Node stops with one line instead of failing later.
// Kept to syntax every Node since 14 parses: it must run far enough to say no.

export const SUPPORTED = "Node 22 (22.19 or later), 24 or 26";

/**
 * What to say about running on Node `version` ("24.1.0"): `refuse` below 22.19 (undici 8's floor, the
 * highest of our dependencies'), `warn` on an odd release line (23, 25: never LTS, not tested), else nothing.
 */
export function nodeVerdict(version) {
  const [major, minor] = version.split(".").map(Number);
  if (major < 22 || (major === 22 && minor < 19)) return { refuse: `this is Node ${version}; Weft runs on ${SUPPORTED}` };
  if (major % 2 === 1) return { warn: `Node ${version} is not a release line Weft is tested on (${SUPPORTED})` };
  return {};
}
