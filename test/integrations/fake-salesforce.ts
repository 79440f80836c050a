import assert from 'node:assert/strict';
import type { Answer } from './helpers.js';

/**
 * Salesforce's Opportunity query as the sync asks it, played as documented: the SOQL the sync
 * sends is checked word for word (columns, the keyset `WHERE`, `ORDER BY LastModifiedDate ASC,
 * Id ASC`), evaluated on the opportunities held, and answered in batches followed through
 * `nextRecordsUrl`.
 */
export const DATA = '/services/data/v60.0';

export interface SfOpportunity {
  Id: string;
  /** ISO 8601, whole seconds (Salesforce keeps no finer). */
  LastModifiedDate: string;
  [field: string]: unknown;
}

const COLUMNS =
  'Id, Name, Amount, StageName, IsWon, IsClosed, CreatedDate, CloseDate, LastModifiedDate(?:, CurrencyIsoCode)?, Account\\.Website';
const QUERY = new RegExp(`^SELECT ${COLUMNS} FROM Opportunity(?: WHERE (.+))? ORDER BY LastModifiedDate ASC, Id ASC$`);
const INSTANT = '(\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ)';
const KEYSET = new RegExp(`^LastModifiedDate > ${INSTANT} OR \\(LastModifiedDate = ${INSTANT} AND Id > '([0-9A-Za-z]{1,18})'\\)$`);
const SINCE = new RegExp(`^LastModifiedDate >= ${INSTANT}$`);

/** A SOQL datetime and a record's LastModifiedDate ("…+0000" or "…Z") as ms. */
const ms = (text: string) => Date.parse(text.replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));

export class FakeSalesforce {
  opportunities: SfOpportunity[] = [];
  /** Records a batch: Salesforce's default is 2,000; tests take fewer. */
  batch = 2000;
  private results = new Map<string, { rows: SfOpportunity[]; offset: number }>();
  private queries = 0;

  /** `GET /query?q=`: undefined when the SOQL is not the sync's Opportunity query. */
  query(soql: string): Answer | undefined {
    const matched = QUERY.exec(soql);
    if (!matched) return undefined;
    const where = matched[1];
    let keep: (o: SfOpportunity) => boolean = () => true;
    if (where !== undefined) {
      const keyset = KEYSET.exec(where);
      const since = SINCE.exec(where);
      if (keyset) {
        assert.equal(keyset[1], keyset[2], 'one instant on both sides of the keyset');
        const at = ms(keyset[1] as string);
        const id = keyset[3] as string;
        keep = (o) => ms(o.LastModifiedDate) > at || (ms(o.LastModifiedDate) === at && o.Id > id);
      } else if (since) {
        const at = ms(since[1] as string);
        keep = (o) => ms(o.LastModifiedDate) >= at;
      } else assert.fail(`an Opportunity WHERE the sync should not send: ${where}`);
    }
    const rows = this.opportunities
      .filter(keep)
      .sort((a, b) => ms(a.LastModifiedDate) - ms(b.LastModifiedDate) || (a.Id < b.Id ? -1 : a.Id > b.Id ? 1 : 0));
    const locator = `01gFAKE${String(++this.queries).padStart(8, '0')}`;
    return this.batchOf(locator, rows, 0);
  }

  /** `GET /query/<locator>-<offset>`: the next batch, or undefined when unknown. */
  more(path: string): Answer | undefined {
    const matched = new RegExp(`^${DATA}/query/(01gFAKE\\d{8})-(\\d+)$`).exec(path);
    const held = matched && this.results.get(matched[1] as string);
    if (!matched || !held) return undefined;
    return this.batchOf(matched[1] as string, held.rows, Number(matched[2]));
  }

  private batchOf(locator: string, rows: SfOpportunity[], offset: number): Answer {
    this.results.set(locator, { rows, offset });
    const records = rows.slice(offset, offset + this.batch).map((o) => ({
      attributes: { type: 'Opportunity', url: `${DATA}/sobjects/Opportunity/${o.Id}` },
      Name: `Opportunity ${o.Id}`,
      Amount: 100,
      StageName: 'Prospecting',
      IsWon: false,
      IsClosed: false,
      CreatedDate: o.LastModifiedDate,
      CloseDate: null,
      Account: null,
      ...o,
    }));
    const done = offset + this.batch >= rows.length;
    return {
      body: {
        totalSize: rows.length,
        done,
        records,
        ...(done ? {} : { nextRecordsUrl: `${DATA}/query/${locator}-${offset + this.batch}` }),
      },
    };
  }
}
