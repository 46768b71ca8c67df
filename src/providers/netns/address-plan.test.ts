import { describe, expect, it } from 'vitest';
import { addressPlan, AddressPlanError, DEFAULT_BLOCKS } from './address-plan.ts';

describe('addressPlan', () => {
  it('lays a /18 out: cluster network, nodes, pods per node, Services', () => {
    const plan = addressPlan(3, '198.19.64.0/18');
    expect(plan).toMatchObject({ network: '198.19.64.0/24', controlPlane: '198.19.64.1', host: '198.19.64.254', serviceCIDR: '198.19.112.0/20', apiServiceIP: '198.19.112.1', clusterCIDR: '198.19.96.0/20' });
    expect(plan.nodes).toEqual([
      { ip: '198.19.64.10', podCIDR: '198.19.96.0/24' },
      { ip: '198.19.64.11', podCIDR: '198.19.97.0/24' },
      { ip: '198.19.64.12', podCIDR: '198.19.98.0/24' },
    ]);
  });

  it('offers the eight /18s of 198.18.0.0/15, none overlapping', () => {
    expect(DEFAULT_BLOCKS).toHaveLength(8);
    const all = DEFAULT_BLOCKS.map((b) => addressPlan(16, b));
    const networks = all.flatMap((p) => [p.network, p.serviceCIDR, ...p.nodes.map((n) => n.podCIDR)]);
    expect(new Set(networks).size).toBe(networks.length);
  });

  it('refuses what Kubernetes refuses or what is not a /18, naming the fix', () => {
    expect(() => addressPlan(2, '127.1.0.0/18')).toThrow(/refuses loopback, link-local and multicast.*use 198\.18\.0\.0\/18/);
    expect(() => addressPlan(2, '169.254.0.0/18')).toThrow(AddressPlanError);
    expect(() => addressPlan(2, '10.0.0.0/8')).toThrow(/needs an IPv4 \/18 such as 198\.18\.0\.0\/18/);
    expect(() => addressPlan(2, '10.1.32.0/18')).toThrow(/third number 0, 64, 128 or 192/);
    expect(() => addressPlan(0)).toThrow(/nodes: 0 is not a whole number between 1 and 16/);
    expect(() => addressPlan(17)).toThrow(AddressPlanError);
  });
});
