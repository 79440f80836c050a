import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { type CacheDeclaration, newCache, sweepExpired } from '../../src/db/caches.js';

// An entry past its time to live leaves its cache without being asked for again (issue 50: memory
// flat across scenarios): lru-cache alone keeps it until the next get.

const declared = (ttlMs: number | undefined, ttlFromLastUse?: true): CacheDeclaration<{ bytes: number }> => ({
  name: 'Test answers',
  file: 'test/db/caches.test.ts',
  key: 'a test key',
  max: 10,
  maxBytes: 1024 * 1024,
  ...(ttlMs === undefined ? {} : { ttlMs }),
  ...(ttlFromLastUse ? { ttlFromLastUse } : {}),
  size: (value) => value.bytes,
  holds: 'app',
  invalidatedBy: ['new key'],
});

test('the sweep drops expired entries no one asks for, and keeps the rest', async () => {
  const short = newCache(declared(40));
  const long = newCache(declared(60_000));
  const untimed = newCache(declared(undefined));
  short.set('old', { bytes: 1000 });
  long.set('kept', { bytes: 2000 });
  untimed.set('kept', { bytes: 3000 });
  await sleep(60);
  short.set('new', { bytes: 10 });
  sweepExpired();
  // size and calculatedSize count expired entries too, as the memory they hold.
  assert.equal(short.size, 1);
  assert.equal(short.calculatedSize, 10);
  assert.ok(short.has('new'));
  assert.equal(long.size, 1);
  assert.equal(untimed.size, 1);
});

test('an entry in use is not swept when its time counts from its last use', async () => {
  // Margins wide enough for a busy machine: used every 100 ms, it would need one wait of 400 ms to expire.
  const used = newCache(declared(400, true));
  used.set('busy', { bytes: 1 });
  used.set('idle', { bytes: 1 });
  for (let i = 0; i < 5; i++) {
    await sleep(100);
    assert.ok(used.get('busy'));
  }
  sweepExpired();
  assert.equal(used.size, 1);
  assert.ok(used.has('busy'));
});

test('an answer still being worked out when its entry is swept is given to whoever asked for it', async () => {
  // The answer is held back until after the sweep, however slow the machine: the sweep always meets it in flight.
  let release = () => {};
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  const slow = newCache<{ bytes: number }>(declared(20), {
    fetchMethod: async () => {
      await held;
      return { bytes: 7 };
    },
  });
  const asked = slow.forceFetch('slow');
  await sleep(50);
  assert.equal(slow.size, 1, 'in flight');
  sweepExpired();
  assert.equal(slow.size, 0, 'swept while in flight');
  release();
  assert.deepEqual(await asked, { bytes: 7 });
});
