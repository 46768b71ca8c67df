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

  it('drops every line containing a ZERODROP_DROP_LINES marker (an ablation), and fails on a marker that matches nothing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'zerodrop-render-'));
    dirs.push(dir);
    const template = join(dir, 'gw.conf');
    await writeFile(template, 'a 1;\n  keepalive_time ${T}s;\nb 2;\n');
    const podDir = join(dir, 'pod');
    const env = { ...process.env, T: '1', ZERODROP_POD_DIR: podDir, ZERODROP_DROP_LINES: 'keepalive_time ${T}s;' };
    await run(process.execPath, [RENDER, template], { env });
    expect(await readFile(join(podDir, 'gw.conf'), 'utf8')).toBe('a 1;\nb 2;\n');
    await expect(run(process.execPath, [RENDER, template], { env: { ...env, ZERODROP_DROP_LINES: 'keepalive_time ${T}s;\nno such line' } })).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringContaining('ZERODROP_DROP_LINES marker(s) match no template line: no such line'),
    });
  });

  it('every template line an ablation drops is in its template (src/profiles/ablation.ts)', async () => {
    const { ablatedProfiles } = await import('../../src/profiles/index.ts');
    const { DROP_LINES_ENV } = await import('../../src/profiles/ablation.ts');
    const request = { protocol: 'http', port: 8000, backendService: 'backend', backendPort: 8080, programmingDelayMs: 200 } as const;
    let checked = 0;
    for (const profile of ablatedProfiles) {
      let plan;
      try {
        plan = profile.gateway?.(request);
      } catch {
        continue; // a profile that does not carry HTTP
      }
      const markers = plan?.env[DROP_LINES_ENV]?.split('\n') ?? [];
      if (markers.length === 0) continue;
      // The templates the pod renders, as the profile defined them (Workload.defined): a directive
      // may stand in each protocol's own file (nginx.conf, nginx-grpc.conf), once in each.
      const templates = Object.entries(plan!.defined!.templates);
      for (const m of markers) {
        const hits = templates.map(([file, t]) => ({ file, lines: t.split('\n').filter((line) => line.includes(m)).length })).filter((h) => h.lines > 0);
        expect(hits.length, `${profile.name}: ${m}`).toBeGreaterThanOrEqual(1);
        for (const h of hits) expect(h.lines, `${profile.name}: ${m} in ${h.file}`).toBe(1);
      }
      checked++;
    }
    expect(checked).toBeGreaterThanOrEqual(8);
  });
});
