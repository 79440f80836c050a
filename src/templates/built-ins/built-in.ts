import type { StoredAction, Content } from '../../pages/index.js';

/** A template of the service's own: every tenant lists it, nobody changes it. */
export interface BuiltIn {
  templateId: string;
  name: string;
  description: string;
  content: Content;
  actions: StoredAction[];
  headerActionId: string;
}

/**
 * A fixed id of the built-ins' own: `<prefix>_builtin<n><slug>` padded with zeros to 26
 * characters. Generated ids use Crockford's alphabet, which has no `i`, `l` or `u`, so no
 * generated id can ever be one of these.
 */
export function fixedId(prefix: 'template' | 'action', body: string): string {
  const padded = `builtin${body}`.padEnd(26, '0');
  if (!/^[a-z0-9]{26}$/.test(padded)) throw new Error(`A built-in's id body must be 26 lowercase letters and digits at most: ${body}`);
  return `${prefix}_${padded}`;
}
