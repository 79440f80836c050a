import type { UrlMatchType } from '../db/enums.js';
import type { FieldError } from '../http/errors.js';

/**
 * Which pages of a site an experience is for: a pattern on the URL's path (query and fragment
 * excluded), as the browser's `location.pathname` has it (percent-encoded). The same RegExp source
 * is compiled here (decisions) and sent to the script (which pages ask for one), so the two agree.
 * - exact: the path itself; one trailing slash more or less is the same page (`/pricing` is `/pricing/`);
 * - prefix: the path and everything under it, by whole segments (`/blog` is `/blog` and `/blog/x`,
 *   never `/blogger`); a value ending in `/` is only what is under it;
 * - glob: the whole path, `*` any characters within one segment, `**` any across segments; a
 *   trailing slash more or less matches too, unless the pattern ends with `/` or `**`.
 * Matching is case-sensitive, as paths are.
 */
export interface UrlMatch {
  type: UrlMatchType;
  value: string;
}

export const MAX_PATTERN_LENGTH = 500;

// What a path pattern may hold: RFC 3986 path characters, `%` of an escape, and `*` (glob only).
const PATH_CHARS = /^\/[A-Za-z0-9\-._~!$&'()*+,;=:@%/]*$/;

const escapeRegExp = (literal: string): string => literal.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** What is wrong with a pattern of `type`, or undefined: a message for the pattern's own pointer. */
export function urlPatternProblem(type: UrlMatchType, value: string): string | undefined {
  if (value.length === 0 || value.length > MAX_PATTERN_LENGTH) return `must be 1 to ${MAX_PATTERN_LENGTH} characters`;
  if (!value.startsWith('/')) return 'must be a path starting with /, without scheme or host';
  if (value.includes('?') || value.includes('#')) return 'is matched on the path only: leave out the query and fragment';
  if (!PATH_CHARS.test(value)) return 'may hold only URL path characters (percent-encode the others)';
  if (/%(?![0-9A-Fa-f]{2})/.test(value)) return 'has a % that is not a percent-escape';
  if (value.includes('*')) {
    if (type !== 'glob') return 'may hold * only in a glob pattern';
    if (value.includes('***')) return 'takes * (within a segment) or ** (across segments), never ***';
  }
  return undefined;
}

/** The errors of a urlMatch at `path` (like `/urlMatch`): its value's problem, at `<path>/value`. */
export function urlMatchErrors(match: UrlMatch, path: string): FieldError[] {
  const problem = urlPatternProblem(match.type, match.value);
  return problem ? [{ path: `${path}/value`, message: problem }] : [];
}

const withoutTrailingSlash = (value: string) => (value.length > 1 && value.endsWith('/') ? value.slice(0, -1) : value);

function globSource(value: string): string {
  const body = value
    .split('**')
    .map((part) =>
      part
        .split('*')
        .map((literal) => escapeRegExp(literal))
        .join('[^/]*'),
    )
    .join('.*');
  const open = !value.endsWith('/') && !value.endsWith('**');
  return `^${body}${open ? '\\/?' : ''}$`;
}

/** The RegExp source (no flags) a path is tested with; the script compiles the same text. */
export function urlMatchSource(match: UrlMatch): string {
  switch (match.type) {
    case 'exact': {
      const value = withoutTrailingSlash(match.value);
      return value === '/' ? '^\\/$' : `^${escapeRegExp(value)}\\/?$`;
    }
    case 'prefix': {
      if (match.value === '/') return '^\\/';
      if (match.value.endsWith('/')) return `^${escapeRegExp(match.value)}`;
      return `^${escapeRegExp(match.value)}(?:\\/|$)`;
    }
    case 'glob':
      return globSource(match.value);
  }
}

export const compileUrlMatch = (match: UrlMatch): RegExp => new RegExp(urlMatchSource(match));

/** A conversionUrl: a path pattern with the glob's syntax (a plain path is its exact page). */
export const conversionMatch = (pattern: string): UrlMatch => ({ type: 'glob', value: pattern });
