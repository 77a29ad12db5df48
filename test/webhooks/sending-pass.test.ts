// The sender's passes (server/webhooks/sending-pass.ts), with rounds that take deliveries
// from an in-memory count of due ones and stay in flight until the test lets them finish:
// a wake-up joining a running pass is never left unclaimed, lanes grow only while rounds
// come back full, and a pass ends only when nothing more is due.
import { describe, expect, test } from 'vitest';
import { passState, runOrJoinPass, type SendRound } from '../../server/webhooks/sending-pass.ts';

/** Due deliveries and rounds that claim from them; each round waits until released. */
function queue(due: number, batchSize: number) {
  const held: (() => void)[] = [];
  let inFlight = 0;
  let mostInFlight = 0;
  const q = {
    due,
    claims: [] as number[],
    get held() {
      return held.length;
    },
    get mostInFlight() {
      return mostInFlight;
    },
    round: (async (claimed) => {
      const count = Math.min(q.due, batchSize);
      q.due -= count;
      q.claims.push(count);
      claimed(count);
      inFlight += 1;
      mostInFlight = Math.max(mostInFlight, inFlight);
      await new Promise<void>((resolve) => held.push(resolve));
      inFlight -= 1;
      return { count, recorded: Promise.resolve() };
    }) as SendRound,
    /** Lets every round in flight finish, and waits until the next ones have started or the pass settled. */
    async release() {
      for (const resolve of held.splice(0)) resolve();
      for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
    },
  };
  return q;
}

async function settle<T>(pending: Promise<T>, q: ReturnType<typeof queue>): Promise<T> {
  let result: { value: T } | null = null;
  void pending.then((value) => (result = { value }));
  for (let step = 0; step < 100 && result === null; step++) await q.release();
  if (result === null) throw new Error('the pass did not end');
  return (result as { value: T }).value;
}

describe('sending passes', () => {
  test('a wake-up arriving during a pass joins it and returns at once; the pass claims again after it although its own round came back short', async () => {
    const state = passState();
    const q = queue(1, 4);
    const first = runOrJoinPass(state, q.round, { batchSize: 4, maxLanes: 1 });
    await new Promise((resolve) => setImmediate(resolve));
    expect(q.claims).toEqual([1]);

    // Two deliveries committed while the first round is in flight, then their wake-up.
    q.due += 2;
    expect(await runOrJoinPass(state, q.round, { batchSize: 4, maxLanes: 1 })).toBe(0);

    expect(await settle(first, q)).toBe(3);
    expect(q.due).toBe(0);
    expect(q.claims).toEqual([1, 2]);
    expect(state.pass).toBeNull();
  });

  test('a lane is added as soon as a round claims a full batch, never more than maxLanes, until nothing is due', async () => {
    const state = passState();
    const q = queue(40, 4);
    const handled = await settle(runOrJoinPass(state, q.round, { batchSize: 4, maxLanes: 3 }), q);
    expect(handled).toBe(40);
    expect(q.due).toBe(0);
    expect(q.mostInFlight).toBe(3);
  });

  test('the rest of a burst is claimed while its first full round is still in flight', async () => {
    const state = passState();
    const q = queue(6, 4);
    const pass = runOrJoinPass(state, q.round, { batchSize: 4, maxLanes: 2 });
    for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(q.claims).toEqual([4, 2]);
    expect(q.held).toBe(2);
    expect(await settle(pass, q)).toBe(6);
  });

  test('with nothing more due and no wake-up, a short round ends the pass; the next wake-up starts a new one', async () => {
    const state = passState();
    const q = queue(2, 4);
    expect(await settle(runOrJoinPass(state, q.round, { batchSize: 4, maxLanes: 2 }), q)).toBe(2);
    expect(q.claims).toEqual([2]);
    q.due = 3;
    expect(await settle(runOrJoinPass(state, q.round, { batchSize: 4, maxLanes: 2 }), q)).toBe(3);
  });

  test('a failing round fails the pass (its job is then retried), and a later wake-up starts afresh', async () => {
    const state = passState();
    const failing: SendRound = async () => {
      throw new Error('database unavailable');
    };
    await expect(runOrJoinPass(state, failing, { batchSize: 4, maxLanes: 2 })).rejects.toThrow('database unavailable');
    expect(state.pass).toBeNull();
    const q = queue(1, 4);
    expect(await settle(runOrJoinPass(state, q.round, { batchSize: 4, maxLanes: 2 }), q)).toBe(1);
  });
});
