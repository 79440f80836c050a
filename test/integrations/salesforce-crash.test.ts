import assert from 'node:assert/strict';
import { test } from 'node:test';
import { onPostgres, type Json } from '../helpers.js';
import { startsAndWork } from '../server-process.js';
import { crashTest, type Read } from './crash-harness.js';
import { DATA, FakeSalesforce } from './fake-salesforce.js';
import type { Answer } from './helpers.js';

// Issue 45 §9, as crash.test.ts for HubSpot (crash-harness.ts): the Salesforce sync survives kill -9
// and resumes by keyset (LastModifiedDate, Id). Salesforce's test server answers each query batch
// slowly, 100 opportunities at a time, three modified in each second so that batches end inside a
// second.

const CLIENT_ID = '3MVG9-crash-consumer-key';
const CLIENT_SECRET = 'crash-consumer-secret-0123456789';
const ACCESS = '00Dxx0000001gPL!crash-access-token';
const OPPORTUNITIES = 700;
const BASE = Date.parse('2026-10-01T00:00:00.000Z');

const store = new FakeSalesforce();
store.batch = 100;
store.opportunities = Array.from({ length: OPPORTUNITIES }, (_, i) => ({
  Id: `006${String(i).padStart(12, '0')}`,
  LastModifiedDate: new Date(BASE + Math.floor(i / 3) * 1000).toISOString().replace('Z', '+0000'),
}));
const modifiedOf = new Map(store.opportunities.map((o) => [o.Id, Date.parse(o.LastModifiedDate.replace('+0000', 'Z'))]));

interface Batch extends Read {
  /** The query's SOQL, or undefined for a batch followed through nextRecordsUrl. */
  soql: string | undefined;
}

const now = (status: number, body: unknown) => ({ now: { status, body } });

test(
  `Salesforce: killed with SIGKILL mid-sync, started again${onPostgres ? ' as two instances' : ''}: the sync resumes by keyset, one instance at a time`,
  startsAndWork(3, 120_000),
  crashTest<Batch>(
    {
      source: 'salesforce',
      name: 'Salesforce',
      read: 'batch',
      reads: 'batches',
      ids: store.opportunities.map((o) => o.Id),
      key: 'crm-sf-crash-bootstrap-key-0123456789abcdef',
      env: (url) => ({ SALESFORCE_LOGIN_URL: url, INTEGRATIONS_SECRET: 'crm-sf-crash-integrations-secret-0123456789abcdef' }),
      integration: (url) => ({ provider: 'salesforce', clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, instanceUrl: url }),
      // Salesforce's token endpoint, the Opportunity describe, and the query API with its batches.
      handle: ({ method, url, key, headers, text }, unexpected) => {
        if (key === 'POST /services/oauth2/token') {
          const form = Object.fromEntries(new URLSearchParams(text));
          const expected = { grant_type: 'client_credentials', client_id: CLIENT_ID, client_secret: CLIENT_SECRET };
          if (
            JSON.stringify(form) !== JSON.stringify(expected) ||
            !String(headers['content-type']).startsWith('application/x-www-form-urlencoded')
          ) {
            unexpected.push(`${key}: ${JSON.stringify(form)}`);
            return now(400, { error: 'invalid_client', error_description: 'invalid client credentials' });
          }
          return now(200, { access_token: ACCESS, instance_url: 'ignored', token_type: 'Bearer', issued_at: '1', signature: 's' });
        }
        if (headers.authorization !== `Bearer ${ACCESS}`) {
          unexpected.push(`${key}: auth`);
          return now(401, [{ errorCode: 'INVALID_SESSION_ID', message: 'Session expired or invalid' }]);
        }
        if (key === `GET ${DATA}/sobjects/Opportunity/describe`) return now(200, { name: 'Opportunity', fields: [{ name: 'Id' }] });
        let batch: Answer | undefined;
        let soql: string | undefined;
        if (key === `GET ${DATA}/query`) {
          soql = url.searchParams.get('q') ?? '';
          try {
            batch = store.query(soql);
          } catch (err) {
            unexpected.push(`${soql}: ${err instanceof Error ? err.message : err}`);
            return now(400, [{ errorCode: 'MALFORMED_QUERY', message: 'unexpected query' }]);
          }
        } else if (method === 'GET') batch = store.more(url.pathname);
        if (!batch) {
          unexpected.push(`${key} ${soql ?? ''}`);
          return now(404, [{ errorCode: 'NOT_FOUND', message: 'The requested resource does not exist' }]);
        }
        return {
          read: { soql, ids: ((batch.body as Json).records as Json[]).map((r) => r.Id as string), answered: false },
          body: batch.body,
        };
      },
    },
    {
      resumed: (answered, resumed) => {
        // The driver saves a batch before it asks for the next: the cursor is its last opportunity.
        const lastSaved = answered[answered.length - 1]?.ids.at(-1) as string;
        const savedAt = new Date(modifiedOf.get(lastSaved) ?? 0).toISOString().slice(0, 19);
        // Resumed by keyset from the saved cursor: nothing read before it comes again.
        assert.ok(
          resumed[0]?.soql?.endsWith(
            ` FROM Opportunity WHERE LastModifiedDate > ${savedAt}Z OR (LastModifiedDate = ${savedAt}Z AND Id > '${lastSaved}') ORDER BY LastModifiedDate ASC, Id ASC`,
          ),
          resumed[0]?.soql,
        );
        const fetchedBefore = new Set(answered.flatMap((s) => s.ids));
        const fetchedAfter = resumed.flatMap((s) => s.ids);
        assert.deepEqual(
          fetchedAfter.filter((id) => fetchedBefore.has(id)),
          [],
          'nothing read before the kill is read again',
        );
        assert.equal(new Set(fetchedAfter).size, fetchedAfter.length, 'each opportunity read once after the restart: one instance synced');
        assert.equal(fetchedBefore.size + fetchedAfter.length, OPPORTUNITIES, 'every opportunity read');
      },
    },
  ),
);
