import type { DealInput } from '../deals/index.js';
import { type CrmDriver, amountOf, bounded, currencyOf, hostOf, instantOf, keysetCursor, parseKeyset } from './driver.js';
import { CrmError, crmCall, type Sleep } from './http.js';
import type { LeadToPush } from './leads.js';

/**
 * Salesforce through its REST API (version from SALESFORCE_API_VERSION), with a connected app's
 * client-credentials flow:
 * - a token from `POST /services/oauth2/token` (form-encoded), asked once per sync;
 * - leads by email: a Lead, else a Contact, that has the email gets a Task with what was typed (never
 *   a change of its fields); otherwise a new Lead is created;
 * - Opportunities read by SOQL after the cursor (`LastModifiedDate` and `Id`, a keyset), oldest change
 *   first, following `nextRecordsUrl`; `CurrencyIsoCode` only when the org has it (multi-currency, from the describe).
 */
export interface SalesforceTarget {
  /** Where the token is asked for: SALESFORCE_LOGIN_URL, or the org's own address (see tokenBase). */
  loginUrl: string;
  instanceUrl: string;
  apiVersion: string;
  clientId: string;
  clientSecret: string;
}

/** Salesforce refuses the client-credentials flow on its shared login hosts: the org's own My Domain is asked instead. */
export function tokenBase(loginUrl: string, instanceUrl: string): string {
  return /^https:\/\/(login|test)\.salesforce\.com$/i.test(loginUrl) ? instanceUrl : loginUrl;
}

/** A SOQL string literal: backslashes and quotes escaped. */
export const soqlString = (value: string): string => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** An instant as a SOQL dateTime literal (seconds: Salesforce keeps no finer). */
export const soqlInstant = (iso: string): string => `${iso.slice(0, 19)}Z`;

interface QueryAnswer<R> {
  records?: R[];
  done?: boolean;
  nextRecordsUrl?: string;
}
interface OpportunityRecord {
  Id: string;
  Name?: string | null;
  Amount?: number | null;
  StageName?: string | null;
  IsWon?: boolean;
  IsClosed?: boolean;
  CreatedDate?: string;
  CloseDate?: string | null;
  LastModifiedDate?: string;
  CurrencyIsoCode?: string | null;
  Account?: { Website?: string | null } | null;
}

/**
 * What a visitor typed, as a Task on the Lead or Contact that already has the email: the record's
 * own fields stay as they are, and a person at the company reads what was typed, where and when.
 */
export function taskOf(whoId: string, lead: LeadToPush): Record<string, string> {
  const page = lead.pageName === '' ? 'a page' : lead.pageName;
  const typed = [
    ['Name', `${lead.firstName} ${lead.lastName}`.trim()],
    ['Email', lead.email],
    ['Phone', lead.phone],
    ['Company', lead.company],
  ].filter(([, value]) => value !== '');
  return {
    WhoId: whoId,
    Subject: `Form on ${page}`.slice(0, 255),
    Description: [
      `Typed on the form of ${page} at ${lead.submittedAt} (the record's own fields were left unchanged):`,
      ...typed.map(([label, value]) => `${label}: ${value}`),
    ].join('\n'),
  };
}

/** Token refusals that mean the credentials are wrong (not a passing failure). */
const REFUSED_GRANTS = new Set(['invalid_client', 'invalid_client_id', 'invalid_grant', 'unauthorized_client']);

export function salesforceDriver(target: SalesforceTarget, sleep?: Sleep, signal?: AbortSignal): CrmDriver {
  const data = `/services/data/${target.apiVersion}`;
  let token: string | undefined;

  async function accessToken(): Promise<string> {
    if (token !== undefined) return token;
    try {
      const answer = await crmCall(
        'Salesforce',
        {
          method: 'POST',
          url: `${tokenBase(target.loginUrl, target.instanceUrl)}/services/oauth2/token`,
          form: { grant_type: 'client_credentials', client_id: target.clientId, client_secret: target.clientSecret },
        },
        sleep,
        signal,
      );
      const body = answer.body as { access_token?: unknown };
      if (typeof body?.access_token !== 'string') throw new CrmError('Salesforce sent a token answer without access_token', answer.status);
      token = body.access_token;
      return token;
    } catch (err) {
      // A refused grant is a 400 with `error`: as final as a 401.
      if (err instanceof CrmError && err.status === 400 && [...REFUSED_GRANTS].some((g) => err.message.includes(g))) {
        throw new CrmError(err.message, 400, true);
      }
      throw err;
    }
  }

  const call = async <T>(method: 'GET' | 'POST', path: string, json?: unknown): Promise<T> => {
    const bearer = await accessToken();
    const answer = await crmCall(
      'Salesforce',
      { method, url: `${target.instanceUrl}${path}`, bearer, ...(json === undefined ? {} : { json }) },
      sleep,
      signal,
    );
    return answer.body as T;
  };
  const query = <R>(soql: string) => call<QueryAnswer<R>>('GET', `${data}/query?q=${encodeURIComponent(soql)}`);

  async function hasCurrency(): Promise<boolean> {
    const described = await call<{ fields?: { name?: string }[] }>('GET', `${data}/sobjects/Opportunity/describe`);
    return (described.fields ?? []).some((f) => f.name === 'CurrencyIsoCode');
  }

  function dealOf(r: OpportunityRecord): DealInput {
    const stage = r.IsWon ? 'won' : r.IsClosed ? 'lost' : 'open';
    return {
      source: 'salesforce',
      externalId: String(r.Id),
      name: bounded(r.Name, `Salesforce opportunity ${r.Id}`),
      amount: amountOf(r.Amount),
      currency: currencyOf(r.CurrencyIsoCode),
      stage,
      accountDomain: hostOf(r.Account?.Website),
      createdAt: instantOf(r.CreatedDate) ?? instantOf(r.LastModifiedDate) ?? new Date().toISOString(),
      closedAt: stage === 'open' ? null : (instantOf(r.CloseDate) ?? null),
    };
  }

  return {
    async pushLeads(leads) {
      const pushed: string[] = [];
      for (const lead of leads) {
        const email = soqlString(lead.email);
        // Anyone can type anyone's email: a record that has it is never patched with typed values.
        const found =
          (await query<{ Id: string }>(`SELECT Id FROM Lead WHERE Email = ${email} LIMIT 1`)).records?.[0]?.Id ??
          (await query<{ Id: string }>(`SELECT Id FROM Contact WHERE Email = ${email} LIMIT 1`)).records?.[0]?.Id;
        if (found !== undefined) await call('POST', `${data}/sobjects/Task`, taskOf(found, lead));
        else {
          const fields: Record<string, string> = { LastName: lead.lastName || lead.email, Company: lead.company || '[not provided]' };
          if (lead.firstName !== '') fields.FirstName = lead.firstName;
          if (lead.phone !== '') fields.Phone = lead.phone;
          await call('POST', `${data}/sobjects/Lead`, { ...fields, Email: lead.email, LeadSource: 'Web' });
        }
        pushed.push(lead.leadId);
      }
      return pushed;
    },

    async readDeals(cursor, page) {
      const columns = ['Id', 'Name', 'Amount', 'StageName', 'IsWon', 'IsClosed', 'CreatedDate', 'CloseDate', 'LastModifiedDate'];
      if (await hasCurrency()) columns.push('CurrencyIsoCode');
      columns.push('Account.Website');
      const since = cursor === null ? undefined : parseKeyset(cursor);
      let where = '';
      if (since !== undefined) {
        const at = soqlInstant(since.at);
        // Keyset: the opportunities of the cursor's second not read yet come next, by Id, as ordered.
        // A cursor without an id (saved before issue 45) reads its whole second again: nothing skipped.
        where =
          since.id === undefined
            ? ` WHERE LastModifiedDate >= ${at}`
            : ` WHERE LastModifiedDate > ${at} OR (LastModifiedDate = ${at} AND Id > ${soqlString(since.id)})`;
      }
      let answer = await query<OpportunityRecord>(
        `SELECT ${columns.join(', ')} FROM Opportunity${where} ORDER BY LastModifiedDate ASC, Id ASC`,
      );
      for (;;) {
        const records = answer.records ?? [];
        if (records.length === 0) return;
        const lastRecord = records[records.length - 1];
        const last = instantOf(lastRecord?.LastModifiedDate);
        if (last === undefined) throw new CrmError('Salesforce sent an opportunity without LastModifiedDate', 200);
        if (!(await page(records.map(dealOf), keysetCursor(last, String(lastRecord?.Id))))) return;
        const next = answer.nextRecordsUrl;
        if (answer.done !== false || next === undefined) return;
        if (!next.startsWith(`${data}/query/`)) throw new CrmError('Salesforce sent a nextRecordsUrl outside its query API', 200);
        answer = await call<QueryAnswer<OpportunityRecord>>('GET', next);
      }
    },
  };
}
