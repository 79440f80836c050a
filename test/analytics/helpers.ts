import assert from 'node:assert/strict';
import type { Json, Res, TestApp } from '../helpers.js';

/** Shared by the analytics tests: pages, audiences and sessions made through the API. */

export function ok(res: Res, status = 200): Json {
  assert.equal(res.status, status, res.text);
  return res.body;
}

export const qs = (query: Record<string, string | number | undefined>) => {
  const parts = Object.entries(query)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`);
  return parts.length > 0 ? `?${parts.join('&')}` : '';
};

export async function newPage(t: TestApp, name = 'Analytics page', key?: string): Promise<string> {
  const res = await t.req('POST', '/v0/pages', { name, title: name, pageContext: 'ctx', pageType: 'inbound' }, key ? { key } : {});
  return ok(res, 201).pageId;
}

export async function newAudience(t: TestApp, pageId: string, body: Json = {}, key?: string): Promise<string> {
  return ok(await t.req('POST', `/v0/pages/${pageId}/audiences`, body, key ? { key } : {}), 201).audienceId;
}

export interface SessionInput {
  audienceId: string;
  start: string;
  seconds?: number;
  scroll?: number;
  clicks?: number;
  questions?: number;
  bounce?: boolean;
  form?: boolean;
  conversion?: boolean;
  utmSource?: string;
  utmMedium?: string;
  utmCampaign?: string;
}

export async function postSession(t: TestApp, pageId: string, s: SessionInput, key?: string): Promise<Json> {
  const body = {
    audienceId: s.audienceId,
    analyticsSessionId: `a-${Math.random()}`,
    pageUrl: 'https://example.com/x',
    sessionStartedAt: s.start,
    sessionEndedAt: new Date(Date.parse(s.start) + 60_000).toISOString(),
    timeSpentSeconds: s.seconds ?? 30,
    maxScrollDepthPercentage: s.scroll ?? 50,
    totalClicksCount: s.clicks ?? 1,
    questionsAskedCount: s.questions ?? 0,
    isBounce: s.bounce ?? false,
    hasFormSubmit: s.form ?? false,
    hasConversion: s.conversion ?? false,
    utmSource: s.utmSource ?? '',
    utmMedium: s.utmMedium ?? '',
    utmCampaign: s.utmCampaign ?? '',
  };
  return ok(await t.req('POST', `/v0/pages/${pageId}/audience_sessions`, body, key ? { key } : {}), 201);
}

export function analytics(t: TestApp, pageId: string, query: Record<string, string | number | undefined> = {}, key?: string) {
  return t.req('GET', `/v0/pages/${pageId}/analytics${qs(query)}`, undefined, key ? { key } : {});
}

/** Every session of a page the list gives for these filters, through every page of it. */
export async function listAll(t: TestApp, pageId: string, filters: Record<string, string | undefined>): Promise<Json[]> {
  const items: Json[] = [];
  let cursor: string | undefined;
  do {
    const body = ok(await t.req('GET', `/v0/pages/${pageId}/audience_sessions${qs({ ...filters, limit: 100, cursor })}`));
    items.push(...body.items);
    cursor = body.nextCursor ?? undefined;
  } while (cursor);
  return items;
}

export interface Sums {
  visits: number;
  bounces: number;
  time: number;
  scroll: number;
  clicks: number;
  questions: number;
  forms: number;
  conversions: number;
}

export const zero = (): Sums => ({ visits: 0, bounces: 0, time: 0, scroll: 0, clicks: 0, questions: 0, forms: 0, conversions: 0 });

export function addListed(s: Sums, session: Json): void {
  s.visits += 1;
  s.bounces += session.isBounce ? 1 : 0;
  s.time += session.timeSpentSeconds;
  s.scroll += session.maxScrollDepthPercentage;
  s.clicks += session.totalClicksCount;
  s.questions += session.questionsAskedCount;
  s.forms += session.hasFormSubmit ? 1 : 0;
  s.conversions += session.hasConversion ? 1 : 0;
}

const close = (actual: number | null, expected: number | null, what: string) => {
  if (expected === null) return assert.equal(actual, null, what);
  assert.ok(actual !== null && Math.abs(actual - expected) <= 1e-6 * Math.max(1, Math.abs(expected)), `${what}: ${actual} vs ${expected}`);
};

/** The metrics as sessions listed one by one add up to them. */
export function assertMetrics(m: Json, s: Sums, what = 'metrics'): void {
  const ratio = (x: number) => (s.visits > 0 ? x / s.visits : null);
  assert.equal(m.visits, s.visits, `${what}: visits`);
  assert.equal(m.bounces, s.bounces, `${what}: bounces`);
  close(m.bounceRate, ratio(s.bounces), `${what}: bounceRate`);
  close(m.timeSpentSeconds, s.time, `${what}: timeSpentSeconds`);
  close(m.avgTimeSpentSeconds, ratio(s.time), `${what}: avgTimeSpentSeconds`);
  close(m.avgMaxScrollDepthPercentage, ratio(s.scroll), `${what}: avgMaxScrollDepthPercentage`);
  assert.equal(m.clicks, s.clicks, `${what}: clicks`);
  assert.equal(m.questionsAsked, s.questions, `${what}: questionsAsked`);
  assert.equal(m.formSubmits, s.forms, `${what}: formSubmits`);
  assert.equal(m.conversions, s.conversions, `${what}: conversions`);
  close(m.conversionRate, ratio(s.conversions), `${what}: conversionRate`);
}

/** The wall clock of an instant in a zone, read with Intl (independently of the service's bucket code). */
export function wall(ms: number, timeZone: string) {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    weekday: 'short',
  }).formatToParts(new Date(ms));
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return {
    date: `${get('year')}-${get('month')}-${get('day')}`,
    hour: Number(get('hour')),
    minute: Number(get('minute')),
    second: Number(get('second')),
    weekday: get('weekday'),
  };
}
