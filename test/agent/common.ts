import { type Json, ok, type TestApp } from '../helpers.js';

export { ok };

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export const PAGE_CONTENT = {
  headline: 'Hello {{ person.firstName | there }}',
  subheadline: 'For {{ account.name }}',
  sections: [{ heading: 'Why', body: 'Because **we** can.' }],
};

/** A page with `count` audiences (the first `linked` of them with a person), as tenant `key`. */
export async function pageWithAudiences(t: TestApp, count: number, options: { key?: string; linked?: number; context?: string } = {}) {
  const opts = options.key ? { key: options.key } : {};
  const page = ok(
    await t.req(
      'POST',
      '/v0/pages',
      { name: 'Agent page', title: 'Agent', pageContext: 'ctx', pageType: 'inbound', content: PAGE_CONTENT },
      opts,
    ),
    201,
  );
  const audiences: Json[] = [];
  for (let i = 0; i < count; i++) {
    let personId: string | undefined;
    if (i < (options.linked ?? 0)) {
      personId = ok(await t.req('POST', '/v0/persons', { name: `Ada Lovelace ${i}`, domain: 'analytical.example' }, opts), 201).personId;
    }
    audiences.push(
      ok(
        await t.req(
          'POST',
          `/v0/pages/${page.pageId}/audiences`,
          { ...(personId ? { personId } : {}), ...(options.context ? { supplementaryContext: options.context } : {}) },
          opts,
        ),
        201,
      ),
    );
  }
  return { page, audiences };
}

/** Polls until `check` holds (or fails after `timeoutMs`). */
export async function until(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/** The audience's versions, newest first, straight from the database. */
export async function versionsOf(t: TestApp, audienceId: string) {
  return t.app.db
    .selectFrom('audience_versions')
    .selectAll()
    .where('audience_id', '=', audienceId)
    .orderBy('version_number', 'desc')
    .execute();
}

/** The `audience_version.status_changed` events of a version, oldest first, as their payloads. */
export async function statusEvents(t: TestApp, versionId: string): Promise<Json[]> {
  const rows = await t.app.db
    .selectFrom('events')
    .select(['payload', 'id'])
    .where('type', '=', 'audience_version.status_changed')
    .orderBy('id')
    .execute();
  return rows.map((r) => JSON.parse(r.payload)).filter((p) => p.data.versionId === versionId);
}
