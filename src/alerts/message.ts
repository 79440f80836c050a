import type { Kysely } from 'kysely';
import type { Database } from '../db/types.js';
import type { Facts } from './fan-out.js';

/** Slack's mrkdwn gives `&`, `<` and `>` meaning: a stored name is text, never a link or a mention. */
const esc = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

interface Names {
  person: string | null;
  account: string | null;
  page: string | null;
}

/** The names the tenant holds for the message's ids, read when it is sent (an erased person is gone). */
async function namesOf(db: Kysely<Database>, tenantId: string, facts: Facts): Promise<Names> {
  const [person, account, page] = await Promise.all([
    facts.personId
      ? db.selectFrom('persons').select('name').where('tenant_id', '=', tenantId).where('id', '=', facts.personId).executeTakeFirst()
      : undefined,
    facts.accountId
      ? db.selectFrom('accounts').select('name').where('tenant_id', '=', tenantId).where('id', '=', facts.accountId).executeTakeFirst()
      : undefined,
    facts.pageId
      ? db.selectFrom('pages').select('name').where('tenant_id', '=', tenantId).where('id', '=', facts.pageId).executeTakeFirst()
      : undefined,
  ]);
  return { person: person?.name ?? null, account: account?.name ?? null, page: page?.name ?? null };
}

/** Where the console shows the visit (its audience's sessions) or the lead. */
function consoleLink(consoleUrl: string, facts: Facts): string {
  if (facts.eventType === 'form.submitted') return `${consoleUrl}#/leads`;
  if (facts.pageId && facts.audienceId) return `${consoleUrl}#/pages/${facts.pageId}/audiences/${facts.audienceId}`;
  return consoleUrl;
}

/**
 * Slack's incoming-webhook body: `text` (the notification and the fallback) and `blocks`, naming the
 * account, the person when known, the page, the source, and a link to the console.
 */
export async function slackMessage(
  db: Kysely<Database>,
  tenantId: string,
  alertName: string,
  facts: Facts & { test?: boolean },
  more: number,
  consoleUrl: string,
): Promise<string> {
  if (facts.test) {
    const text = `Test message from the alert "${esc(alertName)}": this channel receives its alerts.`;
    return JSON.stringify({ text, blocks: [{ type: 'section', text: { type: 'mrkdwn', text } }] });
  }
  const names = await namesOf(db, tenantId, facts);
  const who = names.person
    ? `${esc(names.person)}${names.account ? ` (${esc(names.account)})` : ''}`
    : names.account
      ? `Someone from ${esc(names.account)}`
      : 'Someone';
  const page = esc(names.page ?? facts.path ?? 'a page');
  const what = facts.eventType === 'form.submitted' ? `${who} filled the form on ${page}` : `${who} is on ${page}`;
  const extra = more > 0 ? ` (and ${more} more ${more === 1 ? 'visit' : 'visits'} in the hour before)` : '';
  const text = `${what}${extra}`;
  const fields = [
    names.account ? `*Account*\n${esc(names.account)}` : undefined,
    names.person ? `*Person*\n${esc(names.person)}` : undefined,
    `*Page*\n${page}${facts.path ? ` (${esc(facts.path)})` : ''}`,
    facts.channel ? `*Source*\n${esc(facts.channel)}` : undefined,
  ].filter((f): f is string => f !== undefined);
  return JSON.stringify({
    text,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: `*${esc(alertName)}*: ${text}` } },
      { type: 'section', fields: fields.map((f) => ({ type: 'mrkdwn', text: f })) },
      { type: 'context', elements: [{ type: 'mrkdwn', text: `<${consoleLink(consoleUrl, facts)}|Open in the console>` }] },
    ],
  });
}
