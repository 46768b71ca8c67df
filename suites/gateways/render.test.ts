// fixtures/gateways/render.mjs: the per-pod rendering of gateway configuration templates.

import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const RENDER = 'fixtures/gateways/render.mjs';
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe('render.mjs', () => {
  it('fills ${NAME} from the environment into the pod directory, names twins alike, leaves other $ syntax alone', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'zerodrop-render-'));
    dirs.push(dir);
    const template = join(dir, 'gw-naive.conf');
    await writeFile(template, 'listen ${POD_IP}:${PORT}; pid ${POD_DIR}/gw.pid; set $host_header $host; {$ENV}\n');
    const podDir = join(dir, 'pod');
    const { stdout } = await run(process.execPath, [RENDER, template], { env: { ...process.env, POD_IP: '127.0.0.9', PORT: '8000', ZERODROP_POD_DIR: podDir } });
    expect(stdout.trim()).toBe(podDir);
    expect(await readFile(join(podDir, 'gw.conf'), 'utf8')).toBe(`listen 127.0.0.9:8000; pid ${podDir}/gw.pid; set $host_header $host; {$ENV}\n`);
  });

  it('fails on a variable that is not set, naming it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'zerodrop-render-'));
    dirs.push(dir);
    const template = join(dir, 'x.conf');
    await writeFile(template, 'server ${BACKEND_SERVICE_HOST};\n');
    const env: NodeJS.ProcessEnv = { ...process.env, ZERODROP_POD_DIR: join(dir, 'pod') };
    delete env['BACKEND_SERVICE_HOST'];
    await expect(run(process.execPath, [RENDER, template], { env })).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('environment variable(s) not set: BACKEND_SERVICE_HOST'),
    });
  });
});
