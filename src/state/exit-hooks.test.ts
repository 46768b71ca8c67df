import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'zerodrop-exit-hooks-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/**
 * A node process that registers hooks appending their names to a file, prints "ready", and waits to
 * be signalled. `own` installs a SIGINT handler of its own, as the CLI does: it tears down for a moment,
 * then exits 7; `drop` takes the second hook off again.
 */
async function signalled(setup: 'alone' | 'own' | 'drop', signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null; ran: string }> {
  const log = join(dir, `${setup}-${signal}.log`);
  const module = new URL('./exit-hooks.ts', import.meta.url).pathname;
  const program = `
    import { appendFileSync } from 'node:fs';
    import { onExit } from ${JSON.stringify(module)};
    onExit(() => appendFileSync(${JSON.stringify(log)}, 'first '));
    const drop = onExit(() => appendFileSync(${JSON.stringify(log)}, 'second '));
    if (${JSON.stringify(setup)} === 'own') process.on('SIGINT', () => { appendFileSync(${JSON.stringify(log)}, 'own '); setTimeout(() => { appendFileSync(${JSON.stringify(log)}, 'teardown '); process.exit(7); }, 50); });
    if (${JSON.stringify(setup)} === 'drop') { drop(); }
    setTimeout(() => {}, 20_000);
    console.log('ready');`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', program], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise((resolve) => child.stdout.once('data', resolve));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, sig) => resolve({ code, signal: sig })));
  child.kill(signal);
  const end = await exited;
  return { ...end, ran: await readFile(log, 'utf8').catch(() => '') };
}

describe('onExit', () => {
  it.each(['SIGINT', 'SIGTERM', 'SIGHUP'] as const)('runs the hooks, last registered first, when %s ends a process that leaves it alone, which still ends by it', async (signal) => {
    expect(await signalled('alone', signal)).toEqual({ code: null, signal, ran: 'second first ' });
  });

  it('leaves a signal to the program that handles it, and runs the hooks as that program exits', async () => {
    expect(await signalled('own', 'SIGINT')).toEqual({ code: 7, signal: null, ran: 'own teardown second first ' });
  });

  it('runs no hook that was taken off', async () => {
    expect(await signalled('drop', 'SIGTERM')).toEqual({ code: null, signal: 'SIGTERM', ran: 'first ' });
  });
});
