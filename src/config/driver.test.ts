import { describe, expect, it } from 'vitest';
import { catalog, findScenario } from '../scenarios/index.ts';
import { chooseDriver } from './driver.ts';
import { validateConfig } from './config.ts';
import { UsageError } from './usage-error.ts';

const scenario = (id: string) => findScenario(id)!;

describe('chooseDriver', () => {
  it('keeps the selection for the built-in generators', () => {
    expect(chooseDriver('builtin', catalog, false).scenarios).toHaveLength(catalog.length);
  });

  it('rejects an unknown driver, naming the value and the allowed ones', () => {
    expect(() => chooseDriver('wrk', catalog, false)).toThrow(new UsageError('--driver wrk: unknown driver; use one of builtin, hey, iperf3'));
  });

  it('rejects a named scenario whose load the driver cannot carry out', () => {
    expect(() => chooseDriver('hey', [scenario('backend-delete-http')], true)).toThrow(/backend-delete-http: load "http": hey needs a paced load/);
    expect(() => chooseDriver('iperf3', [scenario('backend-scale-to-zero-udp')], true)).toThrow(/TCP control connection/);
    expect(() => chooseDriver('hey', [scenario('backend-delete-tcp-stream')], true)).toThrow(UsageError);
  });

  it('accepts the paced HTTP gateway scenarios for hey, and narrows an unnamed selection to them', () => {
    expect(chooseDriver('hey', [scenario('gateway-delete-http')], true).scenarios.map((s) => s.id)).toEqual(['gateway-delete-http']);
    const ids = chooseDriver('hey', catalog.filter((s) => !s.control), false).scenarios.map((s) => s.id);
    expect(ids).toContain('gateway-delete-http');
    expect(ids).toContain('gateway-delete-http-no-keepalive');
    expect(ids).not.toContain('backend-delete-http');
    expect(ids).not.toContain('backend-scale-to-zero-udp');
  });

  it('finds nothing in the catalog for iperf3, whose servers no catalog scenario deploys', () => {
    expect(() => chooseDriver('iperf3', catalog, false)).toThrow(/no scenario of the catalog/);
  });
});

describe('driver in zerodrop.config.ts', () => {
  it('is checked like every field: name, value, allowed values', () => {
    expect(validateConfig({ driver: 'hey' }, 'zerodrop.config.ts')).toEqual({ driver: 'hey' });
    expect(() => validateConfig({ driver: 'wrk' }, 'zerodrop.config.ts')).toThrow('zerodrop.config.ts: driver = "wrk": unknown driver; allowed: builtin, hey, iperf3');
  });
});
