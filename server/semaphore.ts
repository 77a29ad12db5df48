// A counting semaphore: bounds how many of something run at once in this process.

/** Counts slots; waiters are served in arrival order. */
export class Semaphore {
  #free: number;
  #waiting: Array<() => void> = [];
  #capacity: number;

  constructor(capacity: number) {
    this.#capacity = capacity;
    this.#free = capacity;
  }

  get idle(): boolean {
    return this.#free === this.#capacity && this.#waiting.length === 0;
  }

  acquire(): Promise<void> {
    if (this.#free > 0) {
      this.#free--;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#free++;
  }
}
