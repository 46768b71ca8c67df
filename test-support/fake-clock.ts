// A clock whose time moves only when a test advances it: timers fire in order of their due time,
// each at its own moment. `settle` lets promise callbacks (an async probe's result) run between timers.

export class FakeClock {
  t = 0;
  private timers = new Map<number, { at: number; fn: () => void }>();
  private next = 1;
  now(): number {
    return this.t;
  }
  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.next++;
    this.timers.set(id, { at: this.t + ms, fn });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }
  advance(ms: number): void {
    const end = this.t + ms;
    for (let due = this.nextDue(end); due; due = this.nextDue(end)) this.fire(due);
    this.t = end;
  }
  /** As advance, with pending promise callbacks run after each timer and at the end. */
  async advanceSettled(ms: number): Promise<void> {
    const end = this.t + ms;
    await settle();
    for (let due = this.nextDue(end); due; due = this.nextDue(end)) {
      this.fire(due);
      await settle();
    }
    this.t = end;
  }
  private nextDue(end: number): [number, { at: number; fn: () => void }] | undefined {
    return [...this.timers.entries()].filter(([, x]) => x.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
  }
  private fire([id, timer]: [number, { at: number; fn: () => void }]): void {
    this.timers.delete(id);
    this.t = timer.at;
    timer.fn();
  }
}

async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}
