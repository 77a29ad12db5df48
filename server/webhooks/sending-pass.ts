// The passes of the sender and of dispatch's first attempts (each its own): one per process
// at a time, running rounds in lanes. A pass starts
// with one lane and adds one (up to `maxLanes`) each time a round claims a full batch, since
// more is due: at once, so the rest of a burst is claimed while that round is being sent. A wake-up arriving while a pass runs joins it instead of running a pass of
// its own: it adds a lane if one is free, and the pass goes on until a claim begun after
// that wake-up comes back short. A lane claims its next round while its last one is being
// recorded, never two.
//
// Crash safety: a joined wake-up's job ends before its deliveries are claimed, but the job
// that started the pass runs until a claim begun after that wake-up; if the process dies
// first, Graphile Worker hands that job on and its new run claims them.

/**
 * One round: calls `claimed` with how many it claimed as soon as it knows, and returns that
 * count and the recording of their outcomes. A round is full when it claimed `batchSize`, or
 * when it says so (`full`: a round whose batch is not counted in those units).
 */
export type SendRound = (
  claimed: (count: number, full?: boolean) => void,
) => Promise<{ count: number; full?: boolean; recorded: Promise<void> }>;

type Pass = { done: Promise<number>; join(): boolean };

export type PassState = {
  /** The pass running in this process, if any. */
  pass: Pass | null;
  /** Wake-ups so far; a lane stops only if none arrived since its claim began. */
  wakeUps: number;
};

export function passState(): PassState {
  return { pass: null, wakeUps: 0 };
}

/**
 * Starts a pass, or joins the one running (and returns 0 at once). A pass ends when none of
 * its lanes found a full round nor saw a wake-up arrive since its claim began; it returns
 * how many deliveries its rounds claimed.
 */
export function runOrJoinPass(state: PassState, round: SendRound, options: { batchSize: number; maxLanes: number }): Promise<number> {
  state.wakeUps += 1;
  if (state.pass?.join()) return Promise.resolve(0);
  const pass = startPass(state, round, options, () => {
    if (state.pass === pass) state.pass = null;
  });
  state.pass = pass;
  return pass.done;
}

function startPass(state: PassState, round: SendRound, options: { batchSize: number; maxLanes: number }, onEnd: () => void): Pass {
  let lanes = 0;
  let handled = 0;
  let finished = false;
  let failure: { error: unknown } | null = null;
  let settle!: (handled: number) => void;
  let fail!: (error: unknown) => void;
  const done = new Promise<number>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });
  const lane = async () => {
    let recording: Promise<void> = Promise.resolve();
    for (;;) {
      const wakeUpsAtClaim = state.wakeUps;
      let count: number;
      let full: boolean;
      try {
        const sent = await round((claimed, claimedFull = claimed >= options.batchSize) => {
          if (claimedFull) addLane();
        });
        await recording;
        recording = sent.recorded;
        count = sent.count;
        full = sent.full ?? count >= options.batchSize;
      } catch (error) {
        failure ??= { error };
        break;
      }
      handled += count;
      if (!full && state.wakeUps === wakeUpsAtClaim) break;
    }
    try {
      await recording;
    } catch (error) {
      failure ??= { error };
    }
    lanes -= 1;
    if (lanes > 0) return;
    // Ended in the same turn as the last lane's decision, so no wake-up joins a finished pass.
    finished = true;
    onEnd();
    if (failure) fail(failure.error);
    else settle(handled);
  };
  /** Another lane, unless the pass has ended (false) or has every lane already. */
  const addLane = (): boolean => {
    if (finished) return false;
    if (lanes < options.maxLanes) {
      lanes += 1;
      void lane();
    }
    return true;
  };
  addLane();
  return { done, join: addLane };
}
