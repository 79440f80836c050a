import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import { paced, takingTurns } from '../../src/agent/pacing.js';
import { startApp, type TestApp } from '../helpers.js';

// A step of work that holds the event loop (a regenerate's batch, the agent's) leaves the loop to
// the clients that connected meanwhile before the next step. libuv accepts one connection a turn,
// so a step per turn let fifty clients that connected at once in one a step (src/http/accepts.ts).
// Through the app's own listening server, as a client on the network meets it.

let t: TestApp;
let port: number;
before(async () => {
  t = await startApp();
  port = Number(new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).port);
});
after(() => t.close());

const CLIENTS = 40;
/** What a step holds the loop for: a batch's synchronous SQLite work. */
const STEP_MS = 10;

function holdLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/** Steps run one after another while CLIENTS connect at once, each on a new connection: how many ran before all were answered. */
async function stepsUntilAnswered(step: (work: () => Promise<void>) => Promise<void>): Promise<number> {
  let answered = 0;
  const requests = Array.from(
    { length: CLIENTS },
    () =>
      new Promise<number>((resolve, reject) => {
        http
          .get({ host: '127.0.0.1', port, path: '/healthz', agent: false }, (res) => {
            res.resume();
            res.on('end', () => {
              answered++;
              resolve(res.statusCode ?? 0);
            });
          })
          .on('error', reject);
      }),
  );
  let steps = 0;
  while (answered < CLIENTS && steps < CLIENTS * 3) {
    steps++;
    await step(async () => holdLoop(STEP_MS));
  }
  assert.deepEqual(new Set(await Promise.all(requests)), new Set([200]));
  return steps;
}

test("a request's steps (a regenerate's batches) let every client that connected meanwhile in before the next", async () => {
  const steps = await stepsUntilAnswered(takingTurns);
  // One a step without it: 40.
  assert.ok(steps <= CLIENTS / 4, `${CLIENTS} clients that connected at once were answered after ${steps} steps`);
});

// paced let them in before the accepts were counted too: a busy step's pause gives the loop many
// turns. Kept so that it stays so; the test above is the one the change answers.
test("the agent's paced steps let them in too", async () => {
  const steps = await stepsUntilAnswered(paced);
  assert.ok(steps <= CLIENTS / 4, `${CLIENTS} clients that connected at once were answered after ${steps} steps`);
});
