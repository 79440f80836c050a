import type { DealInput } from '../deals/index.js';
import type { LeadToPush } from './leads.js';

/** What a sync asks of a CRM, whichever it is (hubspot.ts, salesforce.ts). */
export interface CrmDriver {
  /** Sends leads; returns the ids of those the CRM took (the others are tried again next round). */
  pushLeads(leads: LeadToPush[]): Promise<string[]>;
  /**
   * Reads deals changed since `cursor`, a page at a time, oldest change first; `page` writes them
   * and saves the page's cursor, and returns false to stop (the lease was lost, or enough for one round).
   */
  readDeals(cursor: string | null, page: (deals: DealInput[], cursor: string) => Promise<boolean>): Promise<void>;
}

/** "https://www.Acme.com/about" → "acme.com": the bare host an account's domain is matched on. */
export function hostOf(website: string | null | undefined): string | null {
  if (!website) return null;
  const text = website.trim();
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `https://${text}`;
  if (!URL.canParse(withScheme)) return null;
  const host = new URL(withScheme).hostname
    .toLowerCase()
    .replace(/^www\./, '')
    .replace(/\.$/, '');
  return host.length >= 1 && host.length <= 253 && host.includes('.') ? host : null;
}

/** A CRM amount as a deal takes it: not negative, at most 2 decimals, 0 when missing or unreadable. */
export function amountOf(value: unknown): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : Number.NaN;
  if (!Number.isFinite(n) || n < 0) return 0;
  return Math.min(Math.round(n * 100) / 100, 1_000_000_000_000);
}

/** A CRM's text field cut to what a deal holds. */
export const bounded = (value: unknown, fallback: string): string => {
  const text = typeof value === 'string' ? value.trim() : '';
  return (text === '' ? fallback : text).slice(0, 255);
};

/** An ISO 4217 code in upper case, or the fallback. */
export const currencyOf = (value: unknown, fallback = 'USD'): string =>
  typeof value === 'string' && /^[A-Za-z]{3}$/.test(value) ? value.toUpperCase() : fallback;

/** A CRM's instant (`…+0000` included) as ISO 8601 in UTC, or undefined. */
export function instantOf(value: unknown): string | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  const text = value.replace(/([+-]\d{2})(\d{2})$/, '$1:$2');
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(text) ? Date.parse(`${text}T00:00:00Z`) : Date.parse(text);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

/**
 * A deals cursor that resumes past ties: the last modification time read and, when known, the
 * last id read at that time ("<ISO 8601> <id>"). A cursor saved before issue 45 is the time alone.
 */
export interface Keyset {
  at: string;
  id?: string;
}

export const keysetCursor = (at: string, id?: string): string => (id === undefined ? at : `${at} ${id}`);

export function parseKeyset(cursor: string): Keyset | undefined {
  const [at, id] = cursor.split(' ');
  if (at === undefined || Number.isNaN(Date.parse(at))) return undefined;
  return id === undefined || id === '' ? { at } : { at, id };
}
