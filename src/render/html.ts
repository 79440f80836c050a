/**
 * Escaping for each context a stored value can reach in a served document. Every value from the
 * database goes through one of these; nothing else builds markup from stored text.
 */

const TEXT: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Element text and quoted attribute values (both quotes escaped, so either quoting is safe). */
export const text = (value: string): string => value.replace(/[&<>"']/g, (c) => TEXT[c] ?? c);

/** A double-quoted attribute value. */
export const attr = text;

/** Schemes a stored link may use; anything else (javascript:, data:, vbscript:...) never becomes a link. */
const SAFE_SCHEME = /^(https?|mailto):/i;
const HAS_SCHEME = /^[a-z][a-z0-9+.-]*:/i;

/**
 * A stored URL as an attribute value: absolute http(s)/mailto, or relative (a path, a fragment, a
 * query). Anything else is undefined: the caller leaves the link or image out. Control characters
 * and whitespace inside a scheme are how `java\tscript:` slips past naive checks: they are refused.
 */
export function url(value: string): string | undefined {
  const trimmed = value.trim();
  if (trimmed === '' || hasControl(trimmed)) return undefined;
  if (HAS_SCHEME.test(trimmed) && !SAFE_SCHEME.test(trimmed)) return undefined;
  return attr(trimmed);
}

function hasControl(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/** JSON inside a `<script type="application/json">`: `<` escaped so no `</script>` or `<!--` can appear. */
export const scriptJson = (value: unknown): string =>
  JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
