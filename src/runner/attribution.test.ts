import { describe, expect, it } from 'vitest';
import { defineProfile } from '../profiles/define.ts';
import { catalog } from '../scenarios/index.ts';
import { optionsFor } from './run-matrix.ts';
import { attributionNotes, attributionOf } from './attribution.ts';
import { gatewayProfiles } from '../profiles/gateways.ts';

const deleteHttp = catalog.find((d) => d.id === 'gateway-delete-http')!;
const gateway = (attribution?: { header: string } | 'connection') =>
  defineProfile({ name: 'team-gw', role: 'gateway', protocols: ['http'], description: 'a gateway', command: ['team-gw'], ...(attribution ? { attribution } : {}) });

describe("a profile's attribution drives how requests are attributed, and the result says which applies", () => {
  it('a header the gateway names itself with is read as the gateway pod; the backend keeps x-zerodrop-pod', () => {
    const scenario = deleteHttp.build(gateway({ header: 'x-served-by' }), optionsFor(deleteHttp, {}, false));
    expect(attributionOf(scenario.topology, 'gateway')?.names).toEqual({ pod: 'x-zerodrop-pod', gateway: 'x-served-by' });
    expect(attributionNotes(scenario)).toEqual(['requests to Service gateway are attributed to its gateway pods (gateway) by the response header x-served-by, which names the pod that sent each response']);
  });

  it("'connection': no gateway header is read, and the note says the balancer's connection records place each request", () => {
    const scenario = deleteHttp.build(gateway('connection'), optionsFor(deleteHttp, {}, false));
    expect(attributionOf(scenario.topology, 'gateway')?.names).toEqual({ pod: 'x-zerodrop-pod', gateway: undefined });
    expect(attributionNotes(scenario)[0]).toMatch(/through the load balancer's connection records: the profile says its responses name no pod \(attribution: 'connection'\)/);
  });

  it('the built-in gateways name themselves with x-zerodrop-gateway, as their templates do', () => {
    const nginx = gatewayProfiles.find((p) => p.name === 'nginx')!;
    const scenario = deleteHttp.build(nginx, optionsFor(deleteHttp, {}, false));
    expect(attributionOf(scenario.topology, 'gateway')?.names.gateway).toBe('x-zerodrop-gateway');
  });
});
