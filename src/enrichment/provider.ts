import http from 'node:http';
import https from 'node:https';
import { type Static, Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { EnrichmentConfig } from '../config.js';
import type { Company } from './visit.js';

/**
 * The provider's answer (docs/enrichment.md): `{"company": {...} | null}`. Each field may be null
 * or left out; other fields are the provider's own and are ignored. Anything else (another status,
 * not JSON, a field of the wrong type or size) is the provider's error, never a company.
 */
const Text = (maxLength: number) => Type.Optional(Type.Union([Type.String({ maxLength }), Type.Null()]));
const ProviderCompany = Type.Object({
  name: Text(255),
  domain: Text(253),
  industry: Text(255),
  employees: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 100_000_000 }), Type.Null()])),
  country: Type.Optional(Type.Union([Type.String({ pattern: '^[A-Za-z]{2}$' }), Type.Null()])),
});
const ProviderAnswer = Type.Object({ company: Type.Union([ProviderCompany, Type.Null()]) });
type ProviderAnswer = Static<typeof ProviderAnswer>;
const isAnswer = TypeCompiler.Compile(ProviderAnswer);

/** What the protocol asks about: a visit's address, or a lead's email and its domain. */
export type Question = { ip: string } | { email: string; domain: string };

/** How one question ended; `company` and `unknown` are answers, the rest are the provider's failures. */
export type Answer = { outcome: 'company'; company: Company } | { outcome: 'unknown' } | { outcome: 'timeout' | 'error' };
export type Outcome = Answer['outcome'];

/** Why a question was asked: the series of `/metrics` are split by it. */
export type Purpose = 'visit' | 'lead';

/** Counts each question's outcome (src/metrics/service.ts), when metrics are on. */
export type CountAnswer = (purpose: Purpose, outcome: Outcome) => void;

/** A configured provider: asks one question, answered within the timeout, never throwing. */
export interface Provider {
  timeoutMs: number;
  ask(purpose: Purpose, question: Question): Promise<Answer>;
}

/** The provider's answer, read: a company, none, or an answer outside the protocol (an error). */
function read(text: string): Answer {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { outcome: 'error' };
  }
  if (!isAnswer.Check(body)) return { outcome: 'error' };
  if (body.company === null) return { outcome: 'unknown' };
  const company = toCompany(body.company);
  // A company with neither a name nor a domain names nothing.
  return company.name === null && company.domain === null ? { outcome: 'unknown' } : { outcome: 'company', company };
}

/** Answers larger than this are not companies: a provider's answer is a few hundred bytes. */
const MAX_ANSWER_BYTES = 64 * 1024;

const nonEmpty = (value: string | null | undefined): string | null => (value == null || value.trim() === '' ? null : value.trim());

function toCompany(c: NonNullable<ProviderAnswer['company']>): Company {
  return {
    name: nonEmpty(c.name),
    domain: nonEmpty(c.domain)?.toLowerCase() ?? null,
    industry: nonEmpty(c.industry),
    employees: c.employees ?? null,
    country: c.country?.toUpperCase() ?? null,
  };
}

/**
 * The provider of ENRICHMENT_URL. The timeout bounds the whole exchange, body included: the
 * request is aborted then, and the caller is answered `timeout` at that moment even if the socket
 * takes longer to close. What was asked (an address, an email) is never logged or kept here.
 */
export function httpProvider(config: EnrichmentConfig, count: CountAnswer = () => {}): Provider {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (config.token !== undefined) headers.authorization = `Bearer ${config.token}`;

  const url = new URL(config.url);
  const client = url.protocol === 'https:' ? https : http;
  // Kept-alive sockets: a question costs no new connection, which the timeout could not afford.
  const agent = new client.Agent({ keepAlive: true, maxSockets: 64 });

  /** One POST; node:http rather than fetch, whose first use in a process loads its client (longer than a timeout). */
  function exchange(question: Question, signal: AbortSignal): Promise<Answer> {
    const body = JSON.stringify(question);
    return new Promise<Answer>((resolve, reject) => {
      const req = client.request(url, {
        method: 'POST',
        headers: { ...headers, 'content-length': Buffer.byteLength(body) },
        agent,
        signal,
      });
      req.on('error', reject);
      req.on('response', (res) => {
        res.on('error', reject);
        const length = Number(res.headers['content-length'] ?? 0);
        if (res.statusCode !== 200 || length > MAX_ANSWER_BYTES) {
          res.resume();
          resolve({ outcome: 'error' });
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) {
            res.destroy();
            resolve({ outcome: 'error' });
          } else chunks.push(chunk);
        });
        res.on('end', () => resolve(read(Buffer.concat(chunks).toString('utf8'))));
      });
      req.end(body);
    });
  }

  return {
    timeoutMs: config.timeoutMs,
    async ask(purpose, question) {
      const abort = new AbortController();
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<Answer>((resolve) => {
        timer = setTimeout(() => {
          abort.abort();
          resolve({ outcome: 'timeout' });
        }, config.timeoutMs);
      });
      const asked = exchange(question, abort.signal).catch((): Answer => ({ outcome: abort.signal.aborted ? 'timeout' : 'error' }));
      const answer = await Promise.race([asked, late]);
      clearTimeout(timer);
      count(purpose, answer.outcome);
      return answer;
    },
  };
}
