import assert from 'node:assert/strict';
import type { Json } from '../helpers.js';
import type { Answer, Seen } from './helpers.js';

/**
 * The parts of HubSpot's CRM API the sync calls, played as documented, with state: contacts
 * (batch read by email, batch upsert, batch update), notes, and the deals search (filters, one
 * sort, `limit`, `after`). Every request's body is checked against the documented shape. HubSpot
 * promises no order among deals that tie on the sort property: this one returns ties in
 * descending id order, so a reader that relied on an order it was not given would miss some.
 */
export interface HubDeal {
  id: string;
  /** hs_lastmodifieddate, ms. */
  modified: number;
  properties?: Record<string, string | null>;
}
export interface HubContact {
  id: string;
  properties: Record<string, string>;
}
export interface HubNote {
  properties: Record<string, string>;
  contactId: string;
}

const CONTACT_READ = ['email', 'firstname', 'lastname', 'phone', 'company'];
const OPERATORS: Record<string, (a: number, b: number) => boolean> = {
  EQ: (a, b) => a === b,
  GT: (a, b) => a > b,
  GTE: (a, b) => a >= b,
  LT: (a, b) => a < b,
  LTE: (a, b) => a <= b,
};
/** HubSpot's search window: `after` + `limit` past it is a 400. */
const SEARCH_WINDOW = 10_000;

export class FakeHubSpot {
  contacts = new Map<string, HubContact>();
  notes: HubNote[] = [];
  deals: HubDeal[] = [];
  /** The ids each deals search answered, in order. */
  searches: { body: Json; ids: string[] }[] = [];
  private nextId = 1000;

  /** Answers the request when it is one of the fake's, else undefined. */
  handle(seen: Seen): Answer | undefined {
    const key = `${seen.method} ${seen.path}`;
    if (key === 'POST /crm/v3/objects/contacts/batch/read') return this.readContacts(seen.body);
    if (key === 'POST /crm/v3/objects/contacts/batch/upsert') return this.upsertContacts(seen.body);
    if (key === 'POST /crm/v3/objects/contacts/batch/update') return this.updateContacts(seen.body);
    if (key === 'POST /crm/v3/objects/notes') return this.createNote(seen.body);
    if (key === 'POST /crm/v3/objects/deals/search') {
      const answer = searchDeals(this.deals, seen.body);
      this.searches.push({ body: seen.body, ids: ((answer.body as Json).results ?? []).map((r: Json) => r.id) });
      return answer;
    }
    return undefined;
  }

  contact(email: string, properties: Record<string, string>): HubContact {
    const made = { id: String(this.nextId++), properties: { email, ...properties } };
    this.contacts.set(email.toLowerCase(), made);
    return made;
  }

  private readContacts(body: Json): Answer {
    assert.deepEqual(Object.keys(body).sort(), ['idProperty', 'inputs', 'properties']);
    assert.equal(body.idProperty, 'email');
    assert.deepEqual(body.properties, CONTACT_READ);
    assert.ok(Array.isArray(body.inputs) && body.inputs.length >= 1 && body.inputs.length <= 100);
    const results: Json[] = [];
    const missing: string[] = [];
    for (const input of body.inputs as Json[]) {
      assert.deepEqual(Object.keys(input), ['id']);
      const found = this.contacts.get(String(input.id).toLowerCase());
      if (!found) missing.push(input.id);
      else {
        const properties = Object.fromEntries(CONTACT_READ.map((p) => [p, found.properties[p] ?? null]));
        results.push({ id: found.id, properties, createdAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-01T00:00:00Z', archived: false });
      }
    }
    const errors = missing.length
      ? [
          {
            status: 'error',
            category: 'OBJECT_NOT_FOUND',
            message: 'Could not get some CONTACT objects, they may be deleted or not exist.',
            context: { ids: missing },
          },
        ]
      : [];
    return {
      status: missing.length ? 207 : 200,
      body: { status: 'COMPLETE', results, ...(missing.length ? { numErrors: missing.length, errors } : {}) },
    };
  }

  private upsertContacts(body: Json): Answer {
    assert.deepEqual(Object.keys(body), ['inputs']);
    assert.ok(Array.isArray(body.inputs) && body.inputs.length >= 1 && body.inputs.length <= 100);
    const ids = (body.inputs as Json[]).map((i) => String(i.id).toLowerCase());
    assert.equal(new Set(ids).size, ids.length, 'HubSpot refuses a batch with one id twice');
    const results = (body.inputs as Json[]).map((input) => {
      assert.deepEqual(Object.keys(input).sort(), ['id', 'idProperty', 'properties']);
      assert.equal(input.idProperty, 'email');
      assert.equal(input.id, input.properties.email);
      const existing = this.contacts.get(String(input.id).toLowerCase());
      const contact = existing ?? this.contact(input.id, {});
      Object.assign(contact.properties, input.properties);
      return { id: contact.id, properties: contact.properties, new: !existing };
    });
    return { body: { status: 'COMPLETE', results } };
  }

  private updateContacts(body: Json): Answer {
    assert.deepEqual(Object.keys(body), ['inputs']);
    const results = (body.inputs as Json[]).map((input) => {
      assert.deepEqual(Object.keys(input).sort(), ['id', 'properties']);
      const contact = [...this.contacts.values()].find((c) => c.id === input.id);
      assert.ok(contact, `batch/update of an unknown contact ${input.id}`);
      Object.assign(contact.properties, input.properties);
      return { id: contact.id, properties: contact.properties };
    });
    return { body: { status: 'COMPLETE', results } };
  }

  private createNote(body: Json): Answer {
    assert.deepEqual(Object.keys(body).sort(), ['associations', 'properties']);
    assert.equal(typeof body.properties.hs_note_body, 'string');
    assert.ok(!Number.isNaN(Date.parse(body.properties.hs_timestamp)), 'hs_timestamp is a time');
    assert.equal(body.associations.length, 1);
    const [association] = body.associations as Json[];
    assert.deepEqual(association.types, [{ associationCategory: 'HUBSPOT_DEFINED', associationTypeId: 202 }]);
    assert.ok(
      [...this.contacts.values()].some((c) => c.id === association.to.id),
      'the note is on a known contact',
    );
    this.notes.push({ properties: body.properties, contactId: association.to.id });
    return { status: 201, body: { id: String(this.nextId++), properties: body.properties } };
  }
}

const compare = (a: number, b: number) => a - b;
const numberOf = (deal: HubDeal, property: string): number => {
  if (property === 'hs_lastmodifieddate') return deal.modified;
  if (property === 'hs_object_id') return Number(deal.id);
  assert.fail(`the sync filters or sorts deals by ${property}`);
};

/** `POST /crm/v3/objects/deals/search`, as documented: filter groups OR'd, filters AND'd, one sort. */
export function searchDeals(deals: HubDeal[], body: Json): Answer {
  const allowed = ['after', 'filterGroups', 'limit', 'properties', 'sorts'];
  for (const key of Object.keys(body)) assert.ok(allowed.includes(key), `search body has ${key}`);
  const groups = (body.filterGroups ?? []) as Json[];
  assert.ok(groups.length <= 5, 'at most 5 filter groups');
  assert.ok(groups.flatMap((g) => g.filters).length <= 18, 'at most 18 filters');
  assert.ok(Array.isArray(body.sorts) && body.sorts.length === 1, 'HubSpot sorts by one property');
  const [sort] = body.sorts as Json[];
  assert.ok(sort.direction === 'ASCENDING' || sort.direction === 'DESCENDING');
  const limit = Number(body.limit);
  assert.ok(Number.isInteger(limit) && limit >= 1 && limit <= 200, `limit ${body.limit}`);
  const offset = body.after === undefined ? 0 : Number(body.after);
  assert.ok(typeof body.after === 'undefined' || (typeof body.after === 'string' && Number.isInteger(offset)));
  if (offset + limit > SEARCH_WINDOW) return { status: 400, body: { status: 'error', message: 'past the 10,000 results' } };
  const matches = (deal: HubDeal) =>
    groups.length === 0 ||
    groups.some((g) =>
      (g.filters as Json[]).every((f) => {
        const op = OPERATORS[f.operator];
        assert.ok(op, `operator ${f.operator}`);
        assert.equal(typeof f.value, 'string', 'a filter value is a string');
        return op(numberOf(deal, f.propertyName), Number(f.value));
      }),
    );
  const sign = sort.direction === 'ASCENDING' ? 1 : -1;
  const sorted = deals
    .filter(matches)
    .sort((a, b) => sign * compare(numberOf(a, sort.propertyName), numberOf(b, sort.propertyName)) || Number(b.id) - Number(a.id));
  const page = sorted.slice(offset, offset + limit);
  const properties = body.properties as string[];
  return {
    body: {
      total: sorted.length,
      results: page.map((d) => {
        const all: Record<string, string | null> = {
          hs_object_id: d.id,
          hs_lastmodifieddate: new Date(d.modified).toISOString(),
          dealname: `Deal ${d.id}`,
          amount: '100',
          dealstage: 'appointmentscheduled',
          createdate: new Date(d.modified - 86_400_000).toISOString(),
          ...d.properties,
        };
        const shown = Object.fromEntries(Object.entries(all).filter(([k]) => properties.includes(k) || k === 'hs_object_id'));
        const at = new Date(d.modified).toISOString();
        return { id: d.id, properties: shown, createdAt: at, updatedAt: at, archived: false };
      }),
      ...(offset + limit < sorted.length ? { paging: { next: { after: String(offset + limit), link: 'ignored' } } } : {}),
    },
  };
}
