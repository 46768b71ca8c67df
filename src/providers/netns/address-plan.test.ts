import { describe, expect, it } from 'vitest';
import { addressPlan, AddressPlanError } from './address-plan.ts';

describe('addressPlan', () => {
  it('lays a /16 out: cluster network, nodes, pods per node, Services', () => {
    const plan = addressPlan(3, '198.19.0.0/16');
    expect(plan).toMatchObject({ network: '198.19.0.0/24', controlPlane: '198.19.0.1', host: '198.19.0.254', serviceCIDR: '198.19.240.0/20', apiServiceIP: '198.19.240.1', clusterCIDR: '198.19.128.0/18' });
    expect(plan.nodes).toEqual([
      { ip: '198.19.0.10', podCIDR: '198.19.128.0/24' },
      { ip: '198.19.0.11', podCIDR: '198.19.129.0/24' },
      { ip: '198.19.0.12', podCIDR: '198.19.130.0/24' },
    ]);
  });

  it('refuses what Kubernetes refuses or what is not a /16, naming the fix', () => {
    expect(() => addressPlan(2, '127.1.0.0/16')).toThrow(/refuses loopback, link-local and multicast.*use 198\.18\.0\.0\/16/);
    expect(() => addressPlan(2, '169.254.0.0/16')).toThrow(AddressPlanError);
    expect(() => addressPlan(2, '10.0.0.0/8')).toThrow(/needs an IPv4 \/16 such as 198\.18\.0\.0\/16/);
    expect(() => addressPlan(2, '10.1.2.0/16')).toThrow(/needs an IPv4 \/16/);
    expect(() => addressPlan(0)).toThrow(/nodes: 0 is not a whole number between 1 and 16/);
    expect(() => addressPlan(17)).toThrow(AddressPlanError);
  });
});
