/** Any origin does: only whether a path resolves away from it matters. */
const BASE = 'https://site.invalid';
const BASE_ORIGIN = new URL(BASE).origin;
/**
 * Decodings tried before a path is judged too encoded to be anyone's real one: a proxy or a
 * browser that decodes once more than we do must find nothing off-site in it either.
 */
const MAX_DECODINGS = 3;

/**
 * Whether `path` stays on the host it is sent from as a `Location`: it starts with `/` and it,
 * and each of its percent-decodings, resolves to the same origin as the base under WHATWG URL
 * rules (which read `\` as `/` and drop tabs and newlines, as browsers do). `//evil.example`,
 * `/\evil.example` and `/%2F%2Fevil.example` do not.
 */
export function staysOnHost(path: string): boolean {
  if (!path.startsWith('/')) return false;
  let current = path;
  for (let i = 0; i <= MAX_DECODINGS; i++) {
    if (!sameOrigin(current)) return false;
    let decoded: string;
    try {
      decoded = decodeURIComponent(current);
    } catch {
      // Not valid percent-encoding: nothing in it decodes into anything else.
      return true;
    }
    if (decoded === current) return true;
    current = decoded;
  }
  return false;
}

/** A visitor path as a `Location` value on its own host; `/` when it would lead anywhere else. */
export function locationOnHost(path: string): string {
  if (!staysOnHost(path)) return '/';
  try {
    return encodeURI(path);
  } catch {
    // A lone surrogate cannot be encoded; no real path holds one.
    return '/';
  }
}

function sameOrigin(candidate: string): boolean {
  try {
    return new URL(candidate, BASE).origin === BASE_ORIGIN;
  } catch {
    return false;
  }
}
