import assert from 'node:assert/strict';
import { test } from 'node:test';
import { onPostgres, type Json } from '../helpers.js';
import { startsAndWork } from '../server-process.js';
import { crashTest, type Read } from './crash-harness.js';
import { type HubDeal, searchDeals } from './fake-hubspot.js';
import type { Answer } from './helpers.js';

// Issue 40: the CRM sync is a lease-claimed job that survives kill -9 and resumes from its cursor,
// and runs in one instance at a time (crash-harness.ts). HubSpot's test server answers each deals
// search slowly, a page of 100 at a time.

const TOKEN = 'pat-na1-11111111-crash-hubspot-token';
const DEALS = 700;
const BASE = Date.parse('2026-10-01T00:00:00.000Z');

/** Three deals a second: pages end inside ties, which the sync reads by id (issue 45). */
const deals: HubDeal[] = Array.from({ length: DEALS }, (_, i) => ({
  id: String(5000 + i),
  modified: BASE + Math.floor(i / 3) * 1000,
}));
const modifiedOf = new Map(deals.map((d) => [d.id, d.modified]));

interface Search extends Read {
  /** The first filter: `EQ` reads an instant's tie by id, `GT` what comes after it. */
  filter: { operator: string; value: number } | undefined;
  after: string | undefined;
}

const refused = (status: number, message: string) => ({ now: { status, body: { status: 'error', message } } });

test(
  `killed with SIGKILL mid-sync, started again${onPostgres ? ' as two instances' : ''}: the sync resumes from its cursor, one instance at a time`,
  startsAndWork(3, 120_000),
  crashTest<Search>(
    {
      source: 'hubspot',
      name: 'HubSpot',
      read: 'page',
      reads: 'pages',
      ids: deals.map((d) => d.id),
      key: 'crm-crash-bootstrap-key-0123456789abcdef',
      env: (url) => ({ HUBSPOT_API_URL: url, INTEGRATIONS_SECRET: 'crm-crash-integrations-secret-0123456789abcdef' }),
      integration: () => ({ provider: 'hubspot', accessToken: TOKEN }),
      // HubSpot's deals search (fake-hubspot.ts: filters, one sort, `after` paging) and the associations read, as documented.
      handle: ({ key, headers, text }, unexpected) => {
        let body: Json;
        try {
          body = JSON.parse(text);
        } catch {
          body = undefined;
        }
        if (headers.authorization !== `Bearer ${TOKEN}` || !String(headers['content-type']).startsWith('application/json')) {
          unexpected.push(`${key}: auth or content type`);
          return refused(401, 'Authentication credentials not found.');
        }
        if (key === 'POST /crm/v4/associations/deals/companies/batch/read') {
          if (!Array.isArray(body?.inputs)) unexpected.push(`${key}: no inputs`);
          return { now: { status: 200, body: { status: 'COMPLETE', results: [] } } };
        }
        if (key !== 'POST /crm/v3/objects/deals/search') {
          unexpected.push(key);
          return refused(404, 'not found');
        }
        const first = body?.filterGroups?.[0]?.filters?.[0];
        let answered: Answer;
        try {
          answered = searchDeals(deals, body);
        } catch (err) {
          unexpected.push(`search ${JSON.stringify(body)}: ${err instanceof Error ? err.message : err}`);
          return refused(400, 'bad search');
        }
        const ids = ((answered.body as Json).results as Json[]).map((r) => r.id as string);
        const filter = first === undefined ? undefined : { operator: first.operator, value: Number(first.value) };
        return { read: { filter, after: body.after, ids, answered: false }, status: answered.status ?? 200, body: answered.body };
      },
    },
    {
      resumed: (answered, resumed) => {
        // The driver saves a page before it asks for the next: the cursor is at the last answered
        // page's latest instant (a tie there is read again by id, from the start or after its last id).
        const fetchedBefore = new Set(answered.flatMap((s) => s.ids));
        const savedAt = Math.max(...[...fetchedBefore].map((id) => modifiedOf.get(id) ?? 0));
        assert.deepEqual(
          resumed[0]?.filter,
          { operator: 'EQ', value: savedAt },
          'the first search after the restart reads the saved instant',
        );
        assert.equal(resumed[0]?.after, undefined);
        const fetchedAfter = resumed.flatMap((s) => s.ids);
        assert.deepEqual(
          fetchedAfter.filter((id) => (modifiedOf.get(id) ?? 0) < savedAt),
          [],
          'nothing before the cursor is read again',
        );
        const again = fetchedAfter.filter((id) => fetchedBefore.has(id));
        assert.ok(
          again.every((id) => modifiedOf.get(id) === savedAt),
          `only the saved instant's deals are read again: ${again}`,
        );
      },
    },
  ),
);
