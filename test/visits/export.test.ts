import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { findPage } from '../../src/pages/repository.js';
import { createSession } from '../../src/visits/repository.js';
import { expectProblem, startApp, type Json, type TestApp } from '../helpers.js';
import { listAll, newAudience, newPage, ok } from '../analytics/helpers.js';

// GET /v0/pages/{page_id}/audience_sessions with Accept: text/csv: every matching session, streamed.

let t: TestApp;
before(async () => {
  t = await startApp();
});
after(async () => {
  await t.close();
});

const FIELDS =
  'audienceSessionId,analyticsSessionId,audienceId,pageId,pageTitle,pageUrl,sessionStartedAt,sessionEndedAt,timeSpentSeconds,maxScrollDepthPercentage,totalClicksCount,questionsAskedCount,isBounce,hasFormSubmit,hasConversion,formSubmissionId,formSubmissionIdentifier,formSubmissionEmail,formSubmissionPhone,utmCampaign,utmContent,utmMedium,utmSource,utmTerm,experimentId,arm,referrerHost,channel,channelGroup,deviceType,browser,os,country';

const csv = (pageId: string, query = '', accept = 'text/csv') =>
  t.req('GET', `/v0/pages/${pageId}/audience_sessions${query}`, undefined, { headers: { accept } });

/** RFC 4180, read strictly: quoted fields may hold anything, quotes doubled; records end in CRLF. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let field = '';
  let record: string[] = [];
  let i = 0;
  while (i < text.length) {
    if (text[i] === '"') {
      i++;
      for (;;) {
        const q = text.indexOf('"', i);
        assert.ok(q >= 0, 'unterminated quote');
        field += text.slice(i, q);
        i = q + 1;
        if (text[i] === '"') {
          field += '"';
          i++;
        } else break;
      }
    }
    const c = text[i];
    if (c === ',') {
      record.push(field);
      field = '';
      i++;
    } else if (c === '\r' && text[i + 1] === '\n') {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      i += 2;
    } else {
      assert.ok(c !== '"' && c !== '\r' && c !== '\n', `unquoted special character at ${i}`);
      field += c;
      i++;
    }
  }
  assert.equal(field, '', 'the last record ends with CRLF');
  assert.equal(record.length, 0);
  return records;
}

const base = (audienceId: string, extra: Json = {}) => ({
  audienceId,
  analyticsSessionId: 'a-1',
  pageUrl: 'https://example.com/x',
  sessionStartedAt: '2026-04-01T10:00:00.000Z',
  sessionEndedAt: '2026-04-01T10:01:00.000Z',
  ...extra,
});

describe('CSV export', () => {
  let pageId: string;
  let audienceId: string;
  before(async () => {
    pageId = await newPage(t, 'Export, "quoted"');
    audienceId = await newAudience(t, pageId);
  });

  test('header of the field names; RFC 4180 quoting; formula-looking cells defused; the same values as JSON', async () => {
    const hostile = {
      analyticsSessionId: 'has,comma',
      pageUrl: 'https://example.com/"q"',
      utmSource: '=HYPERLINK("http://evil")',
      utmMedium: '+1+2',
      utmCampaign: '-3',
      utmTerm: '@SUM(A1)',
      utmContent: 'two\r\nlines\nand\rmore',
      formSubmissionIdentifier: '\tTAB',
      formSubmissionEmail: 'plain@example.com',
      formSubmissionPhone: ' =not first',
      timeSpentSeconds: 12.5,
      isBounce: true,
    };
    ok(await t.req('POST', `/v0/pages/${pageId}/audience_sessions`, base(audienceId, hostile)), 201);
    const res = await csv(pageId);
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'text/csv; charset=utf-8');
    assert.match(String(res.headers['content-disposition']), /^attachment; filename="audience-sessions-page_[0-9a-z]{26}\.csv"$/);
    assert.match(String(res.headers.vary), /accept/i);
    const [header, row, ...rest] = parseCsv(res.text);
    assert.equal(header?.join(','), FIELDS);
    assert.equal(rest.length, 0);
    const cell = Object.fromEntries((header ?? []).map((h, i) => [h, row?.[i]]));
    assert.equal(cell.analyticsSessionId, 'has,comma');
    assert.equal(cell.pageUrl, 'https://example.com/"q"');
    assert.equal(cell.pageTitle, 'Export, "quoted"');
    assert.equal(cell.utmSource, `'=HYPERLINK("http://evil")`);
    assert.equal(cell.utmMedium, "'+1+2");
    assert.equal(cell.utmCampaign, "'-3");
    assert.equal(cell.utmTerm, "'@SUM(A1)");
    assert.equal(cell.utmContent, 'two\r\nlines\nand\rmore');
    assert.equal(cell.formSubmissionIdentifier, "'\tTAB");
    assert.equal(cell.formSubmissionPhone, ' =not first');
    assert.equal(cell.timeSpentSeconds, '12.5');
    assert.equal(cell.isBounce, 'true');
    assert.equal(cell.hasConversion, 'false');
    const [json] = ok(await t.req('GET', `/v0/pages/${pageId}/audience_sessions`)).items;
    for (const field of ['audienceSessionId', 'audienceId', 'pageId', 'sessionStartedAt', 'sessionEndedAt', 'formSubmissionEmail']) {
      assert.equal(cell[field], String(json[field]), field);
    }
  });

  test('JSON stays the default; Accept with quality values is honoured', async () => {
    assert.equal(ok(await csv(pageId, '', '*/*')).items.length, 1);
    assert.equal(ok(await t.req('GET', `/v0/pages/${pageId}/audience_sessions`)).items.length, 1);
    assert.equal(ok(await csv(pageId, '', 'text/html')).items.length, 1);
    assert.equal(ok(await csv(pageId, '', 'text/csv;q=0.5, application/json')).items.length, 1);
    const preferred = await csv(pageId, '', 'application/json;q=0.5, text/csv');
    assert.match(String(preferred.headers['content-type']), /^text\/csv/);
  });

  test('cursor and limit do not apply (400); bad filters, unknown pages and other tenants as for JSON', async () => {
    expectProblem(await csv(pageId, '?limit=5'), 400, 'validation_failed', ['/limit']);
    const cursor = ok(await t.req('GET', `/v0/pages/${pageId}/audience_sessions?limit=1`)).nextCursor;
    if (cursor) expectProblem(await csv(pageId, `?cursor=${cursor}`), 400, 'validation_failed', ['/cursor']);
    expectProblem(await csv(pageId, '?startDate=nope'), 400, 'validation_failed', ['/startDate']);
    expectProblem(await csv(pageId, '?startDate=2026-02-01T00:00:00Z&endDate=2026-01-01T00:00:00Z'), 400, 'validation_failed', [
      '/startDate',
    ]);
    expectProblem(await csv('page_01h0000000000000000000000a'), 404, 'not_found');
    const other = await t.newTenant('Other');
    const res = await t.req('GET', `/v0/pages/${pageId}/audience_sessions`, undefined, { key: other.key, headers: { accept: 'text/csv' } });
    expectProblem(res, 404, 'not_found');
  });

  test('a large export holds every matching session once, newest first, with the filters applied', async () => {
    const big = await newPage(t, 'Big');
    const a = await newAudience(t, big);
    const b = await newAudience(t, big);
    const page = await findPage(t.app.db, t.tenantId, big);
    assert.ok(page);
    const total = 2_345;
    // Written through the service's own write path, in a few transactions, for speed.
    for (let i = 0; i < total; i += 500) {
      await t.app.db.transaction().execute(async (trx) => {
        for (let j = i; j < Math.min(total, i + 500); j++) {
          // Pairs share a start, so the keyset's tie-break on id is exercised.
          const start = new Date(Date.UTC(2026, 3, 1) + Math.floor(j / 2) * 60_000).toISOString();
          await createSession(trx, page, {
            audienceId: j % 3 === 0 ? b : a,
            analyticsSessionId: `big-${j}`,
            pageUrl: 'https://example.com/big',
            sessionStartedAt: start,
            sessionEndedAt: start,
            utmSource: j % 7 === 0 ? '-neg' : 'src',
          });
        }
      });
    }
    const all = parseCsv((await csv(big)).text);
    assert.equal(all.length, total + 1);
    const ids = all.slice(1).map((r) => r[0]);
    assert.equal(new Set(ids).size, total);
    const listed = await listAll(t, big, {});
    assert.deepEqual(
      ids,
      listed.map((s) => s.audienceSessionId),
    );
    const filters = { startDate: '2026-04-01T03:00:00Z', endDate: '2026-04-01T12:00:00Z', audienceId: b };
    const some = parseCsv((await csv(big, `?startDate=${filters.startDate}&endDate=${filters.endDate}&audienceId=${b}`)).text);
    const expected = await listAll(t, big, filters);
    assert.ok(expected.length > 0);
    assert.deepEqual(
      some.slice(1).map((r) => r[0]),
      expected.map((s) => s.audienceSessionId),
    );
    // The rollups of those sessions were written by the same path.
    const analytics = ok(
      await t.req('GET', `/v0/pages/${big}/analytics?startDate=2026-04-01T00:00:00Z&endDate=2026-04-02T00:00:00Z&groupBy=utmSource`),
    );
    assert.equal(analytics.totals.visits, total);
  });

  test('the OpenAPI document shows the CSV answer beside the JSON one', async () => {
    const doc = ok(await t.req('GET', '/openapi.json', undefined, { key: null }));
    const content = doc.paths['/v0/pages/{page_id}/audience_sessions'].get.responses['200'].content;
    assert.deepEqual(Object.keys(content).sort(), ['application/json', 'text/csv']);
    assert.equal(content['text/csv'].schema.type, 'string');
  });
});
