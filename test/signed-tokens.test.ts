import assert from 'node:assert/strict';
import { test } from 'node:test';
import { signedTokens } from '../src/signed-tokens.js';

// The one mechanism under the view token and the decision token: what makes a token genuine and fresh.

interface Note {
  note: string;
  issuedAt: number;
}
const isNote = (value: unknown): value is Note =>
  typeof value === 'object' && value !== null && typeof (value as Note).note === 'string' && Number.isInteger((value as Note).issuedAt);
const SECRET = 'a secret of at least thirty-two characters, for notes';
const HOUR = 60 * 60 * 1000;
const notes = signedTokens(SECRET, 'test note v1', isNote, { maxAgeMs: HOUR, maxLength: 200 });
const at = 1_700_000_000_000;

test('a token is genuine only as it was signed: one spelling of its signature, its own purpose and secret', () => {
  const claims = { note: 'hello', issuedAt: at };
  const token = notes.sign(claims);
  assert.match(token, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
  assert.deepEqual(notes.verify(token, at), claims);
  const [body, signature] = token.split('.') as [string, string];
  // The last of 43 base64url characters carries 4 bits and 2 spare ones: the other three spellings
  // of the same bytes are no genuine token, nor is the signature with a character base64 skips.
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const last = alphabet.indexOf(signature.at(-1) as string);
  for (let spare = 1; spare < 4; spare++) {
    const respelled = `${signature.slice(0, -1)}${alphabet[(last & ~3) | ((last + spare) & 3)]}`;
    assert.deepEqual(Buffer.from(respelled, 'base64url'), Buffer.from(signature, 'base64url'));
    assert.equal(notes.verify(`${body}.${respelled}`, at), undefined, respelled);
  }
  for (const stray of ['!', '=', ' ', '\n', '.'])
    assert.equal(notes.verify(`${body}.${signature}${stray}`, at), undefined, JSON.stringify(stray));
  assert.equal(notes.verify(`${body}.`, at), undefined);
  assert.equal(notes.verify(`.${signature}`, at), undefined);
  assert.equal(notes.verify(body, at), undefined);
  // The same claims under another purpose or another secret.
  assert.equal(signedTokens(SECRET, 'test note v2', isNote, { maxAgeMs: HOUR, maxLength: 200 }).verify(token, at), undefined);
  assert.equal(signedTokens(`${SECRET}!`, 'test note v1', isNote, { maxAgeMs: HOUR, maxLength: 200 }).verify(token, at), undefined);
});

test('a genuine token is fresh from a minute ahead of the clock until its maximum age, and no longer than its bound', () => {
  const claims = { note: 'n', issuedAt: at };
  const token = notes.sign(claims);
  assert.deepEqual(notes.verify(token, at + HOUR), claims);
  assert.equal(notes.verify(token, at + HOUR + 1), undefined);
  assert.deepEqual(notes.verify(token, at - 60_000), claims);
  assert.equal(notes.verify(token, at - 60_001), undefined);
  // genuine() says who signed it, whatever its age.
  assert.deepEqual(notes.genuine(token), claims);
  // The longest note whose token is within the bound, and one character more.
  let n = 0;
  while (notes.sign({ note: 'x'.repeat(n + 1), issuedAt: at }).length <= 200) n++;
  const inside = notes.sign({ note: 'x'.repeat(n), issuedAt: at });
  const outside = notes.sign({ note: 'x'.repeat(n + 1), issuedAt: at });
  assert.ok(inside.length >= 199 && outside.length > 200, `${inside.length} ${outside.length}`);
  assert.ok(notes.genuine(inside));
  assert.equal(notes.genuine(outside), undefined);
});

test('genuinely signed claims of the wrong shape, or no JSON at all, are refused', () => {
  assert.equal(notes.verify(notes.sign({ note: 7, issuedAt: at } as unknown as Note), at), undefined);
  assert.equal(notes.verify(notes.seal(Buffer.from('{"note":').toString('base64url')), at), undefined);
  assert.equal(notes.verify(notes.seal('not base64 JSON'), at), undefined);
});
