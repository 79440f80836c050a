import type { Kysely } from 'kysely';
import MarkdownIt from 'markdown-it';
import { accountNameOf } from '../accounts/index.js';
import type { Database } from '../db/types.js';
import { pageNameOf } from '../pages/index.js';
import { personNameOf } from '../persons/index.js';
import type { Facts } from './fan-out.js';

/** Slack's mrkdwn gives `&`, `<` and `>` meaning: a stored name is text, never a link or a mention. */
const esc = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

// markdown-it's linkify-it (a maintained URL finder, fuzzy domains and emails included).
const links = new MarkdownIt().linkify;
/** Look-alikes of the characters mrkdwn formats with: a typed `*bold*` shows its asterisks, unformatted. */
const FORMATTING: Record<string, string> = { '*': '\u2217', _: '\uff3f', '~': '\u223c', '`': '\u02cb' };

/**
 * A value a visitor typed (a name, a company, a path), made inert for Slack: every URL or domain
 * in it defanged (`evil[.]example`, `https[:]//`) so no client makes it a link, the formatting
 * characters replaced by look-alikes, then Slack's escaping of `&`, `<` and `>`. It is sent in
 * mrkdwn objects with `verbatim: true`, so Slack links no channel or mention in it either.
 */
export function inert(value: string): string {
  let text = value;
  const found = links.match(text) ?? [];
  for (const m of [...found].reverse()) {
    const defanged = m.raw.replace(/:\/\//g, '[:]//').replace(/\./g, '[.]');
    text = text.slice(0, m.index) + defanged + text.slice(m.lastIndex);
  }
  return esc(text.replace(/[*_~`]/g, (c) => FORMATTING[c] ?? c));
}

/** A mrkdwn text object whose typed values are inert and that Slack parses no further. */
const verbatim = (text: string) => ({ type: 'mrkdwn', text, verbatim: true });

interface Names {
  person: string | null;
  account: string | null;
  page: string | null;
}

/** The names the tenant holds for the message's ids, read when it is sent (an erased person is gone). */
async function namesOf(db: Kysely<Database>, tenantId: string, facts: Facts): Promise<Names> {
  const [person, account, page] = await Promise.all([
    facts.personId ? personNameOf(db, tenantId, facts.personId) : undefined,
    facts.accountId ? accountNameOf(db, tenantId, facts.accountId) : undefined,
    facts.pageId ? pageNameOf(db, tenantId, facts.pageId) : undefined,
  ]);
  return { person: person ?? null, account: account ?? null, page: page ?? null };
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
    const text = `Test message from the alert "${inert(alertName)}": this channel receives its alerts.`;
    return JSON.stringify({ text, blocks: [{ type: 'section', text: verbatim(text) }] });
  }
  // Every name is inert (a person's and an account's come from what visitors typed): only the
  // labels and the console link below are mrkdwn of ours.
  const names = await namesOf(db, tenantId, facts);
  const who = names.person
    ? `${inert(names.person)}${names.account ? ` (${inert(names.account)})` : ''}`
    : names.account
      ? `Someone from ${inert(names.account)}`
      : 'Someone';
  const page = inert(names.page ?? facts.path ?? 'a page');
  const what = facts.eventType === 'form.submitted' ? `${who} filled the form on ${page}` : `${who} is on ${page}`;
  const extra = more > 0 ? ` (and ${more} more ${more === 1 ? 'visit' : 'visits'} in the hour before)` : '';
  const text = `${what}${extra}`;
  const fields = [
    names.account ? `*Account*\n${inert(names.account)}` : undefined,
    names.person ? `*Person*\n${inert(names.person)}` : undefined,
    `*Page*\n${page}${facts.path ? ` (${inert(facts.path)})` : ''}`,
    facts.channel ? `*Source*\n${inert(facts.channel)}` : undefined,
  ].filter((f): f is string => f !== undefined);
  return JSON.stringify({
    text,
    blocks: [
      { type: 'section', text: verbatim(`*${inert(alertName)}*: ${text}`) },
      { type: 'section', fields: fields.map(verbatim) },
      { type: 'context', elements: [{ type: 'mrkdwn', text: `<${consoleLink(consoleUrl, facts)}|Open in the console>` }] },
    ],
  });
}
