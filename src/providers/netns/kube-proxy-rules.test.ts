import { describe, expect, it } from 'vitest';
import { programmedIn } from './kube-proxy-rules.ts';

// `nft list table ip kube-proxy` on a node of a v1.37.2 netns cluster (cut to the chains that matter).
const V137 = `table ip kube-proxy {
	chain services {
		type filter hook prerouting priority dstnat; policy accept;
	}

	chain service-2QRHZV4L-default/kubernetes/tcp/https {
		meta l4proto tcp dnat ip to numgen random mod 1 map { 0 : 198.18.0.1 . 6443 }
	}

	chain service-2AQI2Y3I-zerodrop-78b612c9/backend/tcp/http {
		meta l4proto tcp dnat ip to numgen random mod 3 map { 0 : 198.18.32.2 . 8080, 1 : 198.18.33.2 . 8080, 2 : 198.18.33.3 . 8080 }
	}

	chain external-2AQI2Y3I-zerodrop-78b612c9/backend/tcp/http {
		meta mark set meta mark | 0x00004000 comment "masquerade"
		goto service-2AQI2Y3I-zerodrop-78b612c9/backend/tcp/http
	}
}
`;

// v1.35: each endpoint a chain of its own, named for it (pkg/proxy/nftables/proxier.go, servicePortEndpointChainNameBase).
const V135 = `table ip kube-proxy {
	chain service-GJGEJ7X2-zerodrop-f0efc620/backend/tcp/http {
		ip daddr 198.18.48.10 tcp dport 80 ip saddr != 198.18.32.0/20 jump mark-for-masquerade
		numgen random mod 2 vmap { 0 : goto endpoint-5OJB2KTY-zerodrop-f0efc620/backend/tcp/http__198.18.32.2/8080, 1 : goto endpoint-7QZ3A2BC-zerodrop-f0efc620/backend/tcp/http__198.18.33.2/8080 }
	}

	chain service-KQ3UXY4M-zerodrop-f0efc620/backend/udp/dns {
		numgen random mod 1 vmap { 0 : goto endpoint-M2Z3A4BC-zerodrop-f0efc620/backend/udp/dns__198.18.32.2/5353 }
	}

	chain endpoint-7QZ3A2BC-zerodrop-f0efc620/backend/tcp/http__198.18.33.2/8080 {
		ip saddr 198.18.33.2 jump mark-for-masquerade
		meta l4proto tcp dnat to 198.18.33.2:8080
	}
}
`;

const ns = 'zerodrop-78b612c9';

describe('programmedIn', () => {
  it('finds each ready address in the Service chain of v1.37 (a dnat map)', () => {
    expect(programmedIn(V137, [{ namespace: ns, service: 'backend', addresses: ['198.18.32.2', '198.18.33.3'] }])).toBe(true);
  });

  it('is false while an address is missing, and an address is a whole token', () => {
    expect(programmedIn(V137, [{ namespace: ns, service: 'backend', addresses: ['198.18.33.4'] }])).toBe(false);
    // 198.18.33.2 is in the map; 198.18.33.20 and 98.18.33.2 are not.
    expect(programmedIn(V137, [{ namespace: ns, service: 'backend', addresses: ['198.18.33.20'] }])).toBe(false);
    expect(programmedIn(V137, [{ namespace: ns, service: 'backend', addresses: ['98.18.33.2'] }])).toBe(false);
  });

  it('reads only the Service chain: an address elsewhere in the table does not count', () => {
    // The API server's address is programmed, for default/kubernetes only.
    expect(programmedIn(V137, [{ namespace: ns, service: 'backend', addresses: ['198.18.0.1'] }])).toBe(false);
    // The endpoint chain of v1.35 names 198.18.33.2, but so does the Service chain: drop it there and it is not programmed.
    const withoutInService = V135.replace(', 1 : goto endpoint-7QZ3A2BC-zerodrop-f0efc620/backend/tcp/http__198.18.33.2/8080', '');
    expect(programmedIn(withoutInService, [{ namespace: 'zerodrop-f0efc620', service: 'backend', addresses: ['198.18.33.2'] }])).toBe(false);
  });

  it('finds the addresses in the endpoint chains a v1.35 Service chain jumps to, on every port', () => {
    expect(programmedIn(V135, [{ namespace: 'zerodrop-f0efc620', service: 'backend', addresses: ['198.18.32.2'] }])).toBe(true);
    // The udp port does not send to 198.18.33.2 yet.
    expect(programmedIn(V135, [{ namespace: 'zerodrop-f0efc620', service: 'backend', addresses: ['198.18.32.2', '198.18.33.2'] }])).toBe(false);
  });

  it('is false for a Service with no chain yet, true for one with no ready address', () => {
    expect(programmedIn(V137, [{ namespace: ns, service: 'gateway', addresses: ['198.18.32.9'] }])).toBe(false);
    expect(programmedIn(V137, [{ namespace: ns, service: 'gateway', addresses: [] }])).toBe(true);
    // Another namespace's Service of the same name is not this one.
    expect(programmedIn(V137, [{ namespace: 'zerodrop-00000000', service: 'backend', addresses: ['198.18.32.2'] }])).toBe(false);
  });
});
