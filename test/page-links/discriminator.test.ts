import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { ok, startApp, type Json, type TestApp } from '../helpers.js';

// The PageLink target in the OpenAPI document is discriminated by `targetType` with a `mapping`
// from each value on the wire to its schema (issue 26), checked with a validator that picks the
// branch by the discriminator (Ajv's `discriminator: true`) against real answers of the API.

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

const COMPONENTS = '#/components/schemas/';
const DOCUMENT_ID = 'https://pam.invalid/openapi.json';

let t: TestApp;
let doc: Json;
before(async () => {
  t = await startApp();
  doc = ok(await t.req('GET', '/openapi.json', undefined, { key: null }));
});
after(async () => {
  await t.close();
});

const targetOf = (document: Json): Json => document.components.schemas.PageLink.properties.target;

test('the mapping names each value on the wire, to the one schema that holds it', () => {
  const target = targetOf(doc);
  assert.deepEqual(target.discriminator, {
    propertyName: 'targetType',
    mapping: {
      audience: `${COMPONENTS}AudienceTarget`,
      page: `${COMPONENTS}PageTarget`,
      page_routing: `${COMPONENTS}PageRoutingTarget`,
    },
  });
  // Every branch is in the mapping and nothing else is, and each named schema fixes that value.
  assert.deepEqual(
    (target.oneOf as Json[]).map((b) => b.$ref).sort(),
    Object.values(target.discriminator.mapping as Record<string, string>).sort(),
  );
  assert.equal(target.anyOf, undefined);
  for (const [value, ref] of Object.entries(target.discriminator.mapping as Record<string, string>)) {
    const schema = doc.components.schemas[ref.slice(COMPONENTS.length)];
    assert.deepEqual(schema.properties.targetType.enum, [value], ref);
    assert.ok(schema.required.includes('targetType'), `${ref} requires targetType`);
  }
});

/** A validator of the document's schema `name`, by discriminator, the target's branches taken from its mapping. */
function validatorOf(name: string): { validate: ValidateFunction; errors: () => ErrorObject[] } {
  const components = structuredClone(doc.components) as Json;
  const target = targetOf({ components });
  // Ajv picks the branch by the discriminator but reads no `mapping` (it refuses one): the branches
  // it is given are the mapping's, so a value the mapping misses or misnames fails here.
  target.oneOf = Object.values(target.discriminator.mapping as Record<string, string>).map(($ref) => ({ $ref }));
  delete target.discriminator.mapping;
  // strictTypes off: OpenAPI writes a discriminated union without `type: object` beside it.
  const ajv = new Ajv2020({ discriminator: true, allErrors: true, strictTypes: false });
  addFormats(ajv);
  ajv.addKeyword('components');
  ajv.addSchema({ $id: DOCUMENT_ID, components });
  const validate = ajv.compile({ $ref: `${DOCUMENT_ID}${COMPONENTS}${name}` });
  return { validate, errors: () => validate.errors ?? [] };
}

test('real page links of every target type validate against the document, by their discriminator', async () => {
  const page = ok(await t.req('POST', '/v0/pages', { name: 'Disc', title: 'Disc', pageContext: 'ctx', pageType: 'inbound' }), 201);
  const audience = ok(await t.req('POST', `/v0/pages/${page.pageId}/audiences`, {}), 201);
  const targets = [
    { targetType: 'audience', audienceId: audience.audienceId },
    { targetType: 'page', pageId: page.pageId },
    { targetType: 'page_routing', pageId: page.pageId },
  ];
  const link = validatorOf('PageLink');
  for (const [i, target] of targets.entries()) {
    const created = ok(await t.req('POST', '/v0/page_links', { path: `/disc/${i}`, target }), 201);
    assert.ok(link.validate(created), `${target.targetType}: ${JSON.stringify(link.errors())}`);
  }
  const list = validatorOf('PageLinkList');
  const search = ok(await t.req('GET', '/v0/page_links/search?query=disc'));
  assert.deepEqual(search.items.map((l: Json) => l.target.targetType).sort(), ['audience', 'page', 'page_routing']);
  assert.ok(list.validate(search), JSON.stringify(list.errors()));
});

test('a value outside the mapping, or a branch with the wrong fields, is refused by the discriminator', async () => {
  const page = ok(await t.req('POST', '/v0/pages', { name: 'Disc2', title: 'Disc2', pageContext: 'ctx', pageType: 'inbound' }), 201);
  const created = ok(await t.req('POST', '/v0/page_links', { path: '/disc2', target: { targetType: 'page', pageId: page.pageId } }), 201);
  const link = validatorOf('PageLink');

  assert.equal(link.validate({ ...created, target: { targetType: 'campaign', pageId: page.pageId } }), false);
  assert.deepEqual(
    link.errors().map((e) => [e.keyword, e.instancePath]),
    [['discriminator', '/target']],
  );

  // A page target carrying an audience: only the page branch is looked at (a plain oneOf would
  // report every branch), and what it misses is named.
  assert.equal(link.validate({ ...created, target: { targetType: 'page', audienceId: 'audience_x' } }), false);
  const errors = link.errors();
  assert.ok(errors.length > 0);
  for (const e of errors) assert.match(e.schemaPath, /PageTarget/, JSON.stringify(errors));
  assert.ok(errors.some((e) => e.keyword === 'required' && e.params.missingProperty === 'pageId'));
});
