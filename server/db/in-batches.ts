// A large piece of work done a batch at a time (a sweep, a monthly reset), so no statement or
// transaction holds many row locks or runs long: each batch reports how many rows it took, and
// a batch that comes back short was the last.

/** Runs `batch` until one handles fewer than `size` rows; returns how many they handled in all. */
export async function inBatches(size: number, batch: () => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const handled = await batch();
    total += handled;
    if (handled < size) return total;
  }
}
