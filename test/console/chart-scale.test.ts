// Runs once (scripts/test.mjs): it reaches no database.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { timeDomain, valueDomain } from '../../console/src/chart-scale.js';

// The chart's axes (issue 38: one day of an experiment was drawn on an axis from 2027 to 2029, up
// to 200%): the time axis is the points' own span, the value axis starts at 0 and a proportion
// never passes 100%.

const DAY = 86_400;
const day = (iso: string) => Date.parse(iso) / 1000;

describe('chart domains', () => {
  test('the time axis spans exactly the days drawn; one day gets that day', () => {
    const one = day('2028-03-01T00:00:00Z');
    assert.deepEqual(timeDomain([one]), [one, one + DAY]);
    const days = [0, 1, 2, 3, 4, 5, 6].map((i) => one + i * DAY);
    assert.deepEqual(timeDomain(days), [one, one + 6 * DAY]);
    assert.equal(timeDomain([]), null);
  });

  test('a proportion is capped at 100%, and zooms in on small rates', () => {
    assert.deepEqual(valueDomain([100], '%'), [0, 100], 'a 100% rate is not drawn up to 200%');
    assert.deepEqual(valueDomain([null, 100, 50], '%'), [0, 100]);
    assert.deepEqual(valueDomain([95.5], '%'), [0, 100]);
    assert.deepEqual(valueDomain([10, 25], '%'), [0, 50]);
    assert.deepEqual(valueDomain([1.2], '%'), [0, 2]);
    assert.deepEqual(valueDomain([null, null], '%'), [0, 10], 'nothing yet: a flat axis from 0');
    assert.deepEqual(valueDomain([0, 0], '%'), [0, 10]);
  });

  test('counts start at 0 and end a little above the highest', () => {
    assert.deepEqual(valueDomain([3], 'count'), [0, 5]);
    assert.deepEqual(valueDomain([0], 'count'), [0, 1]);
    assert.deepEqual(valueDomain([1000], 'count'), [0, 2000]);
    assert.deepEqual(valueDomain([90], 'count'), [0, 100]);
    assert.deepEqual(valueDomain([Number.NaN, 7], 'count'), [0, 10]);
  });
});
