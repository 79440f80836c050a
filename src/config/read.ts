/** The environment as the process has it: every value a string, or unset. */
export type Env = Record<string, string | undefined>;

/** Thrown for a bad environment; its message is the one line shown to the operator. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Empty strings count as unset, as most shells and env files write "unset" that way. */
export function readString(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value;
}

export function readInteger(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = readString(env, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || value < min || value > max)
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  return value;
}

export function readBoolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = readString(env, name);
  if (raw === undefined) return fallback;
  if (/^(true|1|yes)$/i.test(raw)) return true;
  if (/^(false|0|no)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

export function readList(env: Env, name: string): string[] {
  return (readString(env, name) ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
}

/** A DNS name: dot-separated labels of letters, digits and inner hyphens, 253 characters at most. */
export function isHostname(value: string): boolean {
  return value.length <= 253 && /^(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))*$/i.test(value);
}
