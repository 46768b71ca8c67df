// kubectl, built from the same release as the cluster, drives the netns cluster as it drives any:
// nothing here goes through zerodrop's own Kubernetes code. What it shows is what a kubelet-run
// cluster shows: Deployments roll out, a Service's ClusterIP reaches its pods from another pod and
// its NodePort from the host, a terminating pod's endpoint goes ready:false, serving:true,
// terminating:true (as upstream's EndpointSlice controller writes it), a drain honours a
// PodDisruptionBudget, and `logs -f` follows a container.

import { setTimeout as sleep } from 'node:timers/promises';
import { dirname, join } from 'node:path';
import { tmpdir } from 'node:os';
import { execa } from 'execa';
import { controlPlanePin, controlPlanePins, controlPlanePrograms } from '../../src/providers/netns/control-plane-binary.ts';
import { describe, expect, it } from 'vitest';
import { skipReason, title, useNetnsCluster } from './context.ts';
import { kubeProxyProgrammed } from '../../src/providers/netns/kube-proxy-rules.ts';

/** A one-line HTTP server on Node.js that answers with its pod's name and logs each request. */
const SERVER = "require('http').createServer((q,s)=>{console.log('GET '+q.url);s.end(process.env.HOSTNAME)}).listen(8080,()=>console.log('listening'))";

function inCidr(ip: string, cidr: string): boolean {
  const int = (a: string) => a.split('.').reduce((n, x) => n * 256 + Number(x), 0);
  const [base, bits] = cidr.split('/');
  const size = 2 ** (32 - Number(bits));
  return Math.floor(int(ip) / size) === Math.floor(int(base!) / size);
}

/** The first answer of `url`, asked every 200 ms for up to 15 s while nothing programs it yet. */
async function firstAnswer(url: string): Promise<string> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      return await (await fetch(url, { signal: AbortSignal.timeout(2_000) })).text();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(200);
    }
  }
}

describe.skipIf(skipReason !== '')(title('kubectl on a netns cluster'), () => {
  const cluster = useNetnsCluster(2);
  const kubectl = (...args: string[]) => cluster.kubectl(args);
  const json = async <T>(...args: string[]): Promise<T> => JSON.parse(await cluster.kubectl([...args, '-o', 'json'])) as T;

  it('a directory of release binaries serves instead of the build', async () => {
    // The build's directory holds one link per program, by upstream's names: what a user's
    // ZERODROP_KUBE_BINARIES directory of release binaries holds.
    const built = cluster.get().kubectl[0]!;
    const programs = await controlPlanePrograms({ binaries: dirname(built) });
    expect(programs.version).toBe(cluster.get().version);
    expect(programs.argv('kube-proxy')).toEqual([join(dirname(built), 'kube-proxy')]);
    await expect(controlPlanePrograms({ binaries: tmpdir() })).rejects.toThrow(/lacks etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy/);
  });

  it('reports the pinned release as the server version', async () => {
    // The release asked for (ZERODROP_KUBE_VERSION, context.ts), else the default pin.
    const asked = process.env['ZERODROP_KUBE_VERSION'];
    const pinned = (asked ? controlPlanePin(asked) : controlPlanePins()[0])?.version;
    const version = await json<{ serverVersion: { gitVersion: string } }>('version');
    expect(version.serverVersion.gitVersion).toBe(pinned);
    expect(cluster.get().version).toBe(pinned);
    const nodes = await json<{ items: { metadata: { name: string }; status: { conditions: { type: string; status: string }[] } }[] }>('get', 'nodes');
    expect(nodes.items.map((n) => n.metadata.name).sort()).toEqual(cluster.get().nodes.map((n) => n.name).sort());
  });

  it('create deployment, expose: the ClusterIP from another pod, the NodePort from the host', async () => {
    await kubectl('create', 'deployment', 'web', '--image=node:24-alpine', '--replicas=2', '--port=8080', '--', 'node', '-e', SERVER);
    await kubectl('rollout', 'status', 'deployment/web', '--timeout=120s');
    await kubectl('expose', 'deployment', 'web', '--port=80', '--target-port=8080', '--type=NodePort');
    const pods = await json<{ items: { metadata: { name: string } }[] }>('get', 'pods', '-l', 'app=web');
    const names = pods.items.map((p) => p.metadata.name);
    expect(names).toHaveLength(2);

    const service = await json<{ spec: { clusterIP: string; ports: { nodePort: number }[] } }>('get', 'service', 'web');
    // From the host: every node answers on the NodePort (kube-proxy in nftables mode), once its
    // kube-proxy has programmed the new Service (its sync loop: a second or so).
    for (const node of cluster.get().nodes) expect(names).toContain(await firstAnswer(`http://${node.ip}:${service.spec.ports[0]!.nodePort}/`));
    // From a pod: the Service's ClusterIP, through the environment the node agent gives every pod.
    await kubectl('run', 'client', '--image=node:24-alpine', '--restart=Never', '--', 'node', '-e',
      "fetch('http://'+process.env.WEB_SERVICE_HOST+':'+process.env.WEB_SERVICE_PORT+'/').then(r=>r.text()).then(t=>console.log('answer '+t))");
    await kubectl('wait', '--for=jsonpath={.status.phase}=Succeeded', 'pod/client', '--timeout=60s');
    const logs = await kubectl('logs', 'client');
    expect(logs).toMatch(/^answer web-/m);
    expect(names).toContain(/^answer (\S+)/m.exec(logs)![1]);
    // From the Service range the cluster was given (address-plan.ts).
    expect(inCidr(service.spec.clusterIP, cluster.get().plan.serviceCIDR), service.spec.clusterIP).toBe(true);
    // What deploy waits for before a load starts, read from every node's kube-proxy rules as this
    // release writes them: the Service sends to both pods, and not to an address no pod has.
    const ips = (await json<{ items: { status: { podIP: string } }[] }>('get', 'pods', '-l', 'app=web')).items.map((p) => p.status.podIP);
    const nodes = cluster.get().nodes.map((n) => n.netns);
    expect(await kubeProxyProgrammed(nodes, [{ namespace: 'default', service: 'web', addresses: ips }])).toBe(true);
    expect(await kubeProxyProgrammed(nodes, [{ namespace: 'default', service: 'web', addresses: [...ips, service.spec.clusterIP] }])).toBe(false);
    expect(await kubeProxyProgrammed(nodes, [{ namespace: 'default', service: 'no-such-service', addresses: ips }])).toBe(false);
  });

  it('no namespace of the cluster has a route off the machine', async () => {
    // 192.0.2.1 (TEST-NET-1) stands for any outside address: neither the control plane, a node nor a
    // pod may reach it (the web pods of the test above are running).
    const id = cluster.get().id;
    const namespaces = (await execa('ip', ['netns', 'list'])).stdout.split('\n').map((l) => l.split(' ')[0] ?? '').filter((n) => n.startsWith(`zdk-${id}-`));
    expect(namespaces.filter((n) => /-p[0-9a-f]{8}$/.test(n)).length).toBeGreaterThan(0);
    expect(namespaces).toContain(`zdk-${id}-cp`);
    for (const ns of namespaces) {
      const route = await execa('ip', ['netns', 'exec', ns, 'ip', 'route', 'get', '192.0.2.1'], { reject: false });
      if (/-p[0-9a-f]{8}$/.test(ns)) {
        // A pod's default route is its node (ClusterIPs are translated there), where it ends.
        expect(route.stdout, ns).toMatch(/via 169\.254\.1\.1 dev eth0/);
        const tried = await execa('ip', ['netns', 'exec', ns, 'curl', '-sS', '-m', '3', 'http://192.0.2.1/'], { reject: false });
        // curl's 7 is "failed to connect" at once (the node answered that it has no route), not 28, a
        // timeout that a packet sent somewhere would give.
        expect(tried.exitCode, `${ns}: ${tried.stderr}`).toBe(7);
      } else {
        expect(route.exitCode, `${ns}: ${route.stdout}`).not.toBe(0);
        expect(route.stderr, ns).toMatch(/unreachable/i);
      }
    }
  });

  it('logs -f follows a container as it writes', async () => {
    const pod = (await json<{ items: { metadata: { name: string }; status: { podIP: string } }[] }>('get', 'pods', '-l', 'app=web')).items[0]!;
    const [file, ...pre] = cluster.get().kubectl;
    const follow = execa(file!, [...pre, 'logs', '-f', pod.metadata.name], { buffer: false, timeout: 30_000 });
    const lines: string[] = [];
    follow.stdout!.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter((l) => l !== '')));
    await sleep(1_000);
    // The pod's address is reachable from the host: the node routes its pod range.
    await fetch(`http://${pod.status.podIP}:8080/followed`, { signal: AbortSignal.timeout(5_000) });
    for (let i = 0; i < 50 && !lines.includes('GET /followed'); i++) await sleep(100);
    follow.kill();
    await follow.catch(() => {});
    expect(lines).toContain('listening');
    expect(lines).toContain('GET /followed');
  });

  it("sets a pod's safe sysctls in its network namespace and rejects a pod asking for an unsafe one, as a kubelet does", async () => {
    const sysctls = (list: { name: string; value: string }[]) => `--overrides=${JSON.stringify({ spec: { securityContext: { sysctls: list } } })}`;
    const read = "console.log('range '+require('fs').readFileSync('/proc/sys/net/ipv4/ip_local_port_range','utf8').trim().split(/\\s+/).join('-'))";
    await kubectl('run', 'sysctl-safe', '--image=node:24-alpine', '--restart=Never', sysctls([{ name: 'net.ipv4.ip_local_port_range', value: '1024 65535' }]), '--', 'node', '-e', read);
    await kubectl('wait', '--for=jsonpath={.status.phase}=Succeeded', 'pod/sysctl-safe', '--timeout=60s');
    expect(await kubectl('logs', 'sysctl-safe')).toContain('range 1024-65535');
    // The node's own range is untouched: the value is the pod's namespace's.
    const node = cluster.get().nodes[0]!.netns;
    expect((await execa('ip', ['netns', 'exec', node, 'cat', '/proc/sys/net/ipv4/ip_local_port_range'])).stdout.split(/\s+/)).not.toEqual(['1024', '65535']);

    // net.ipv4.tcp_tw_reuse is not on the kubelet's safe list, and no node here allows an unsafe one.
    await kubectl('run', 'sysctl-unsafe', '--image=node:24-alpine', '--restart=Never', sysctls([{ name: 'net.ipv4.tcp_tw_reuse', value: '1' }]), '--', 'node', '-e', read);
    await kubectl('wait', '--for=jsonpath={.status.phase}=Failed', 'pod/sysctl-unsafe', '--timeout=60s');
    const rejected = await json<{ status: { reason?: string; message?: string; containerStatuses?: unknown[] } }>('get', 'pod', 'sysctl-unsafe');
    expect(rejected.status.reason).toBe('SysctlForbidden');
    expect(rejected.status.message).toBe('Pod was rejected: forbidden sysctl: "net.ipv4.tcp_tw_reuse" not allowlisted');
    const events = await json<{ items: { type: string; message: string }[] }>('get', 'events', '--field-selector', 'involvedObject.name=sysctl-unsafe,reason=SysctlForbidden');
    expect(events.items.map((e) => `${e.type} ${e.message}`)).toEqual(['Warning forbidden sysctl: "net.ipv4.tcp_tw_reuse" not allowlisted']);
    await kubectl('delete', 'pod', 'sysctl-safe', 'sysctl-unsafe', '--wait=true', '--timeout=60s');
  });

  it('a terminating pod stays in its EndpointSlice as ready:false, serving:true, terminating:true', async () => {
    await kubectl('patch', 'deployment', 'web', '--type=strategic', '-p', JSON.stringify({ spec: { template: { spec: { terminationGracePeriodSeconds: 10, containers: [{ name: 'node', lifecycle: { preStop: { sleep: { seconds: 4 } } } }] } } } }));
    await kubectl('rollout', 'status', 'deployment/web', '--timeout=120s');
    const [file, ...pre] = cluster.get().kubectl;
    const watch = execa(file!, [...pre, 'get', 'endpointslices', '-l', 'kubernetes.io/service-name=web', '-w', '-o', 'json'], { buffer: false, timeout: 60_000 });
    let seen = '';
    watch.stdout!.on('data', (chunk: Buffer) => (seen += chunk.toString()));
    // One of the new pods: the rollout's old ones may still be terminating.
    const pod = (await json<{ items: { metadata: { name: string; deletionTimestamp?: string } }[] }>('get', 'pods', '-l', 'app=web')).items.find((p) => !p.metadata.deletionTimestamp)!.metadata.name;
    await kubectl('delete', 'pod', pod, '--wait=false');
    const terminating = () => /"ready": false,\s*"serving": true,\s*"terminating": true/.test(seen);
    for (let i = 0; i < 60 && !terminating(); i++) await sleep(100);
    watch.kill();
    await watch.catch(() => {});
    expect(terminating(), seen.slice(-2_000)).toBe(true);
    await kubectl('wait', '--for=delete', `pod/${pod}`, '--timeout=60s');
  });

  it('rollout restart and scale', async () => {
    const before = (await json<{ items: { metadata: { name: string } }[] }>('get', 'pods', '-l', 'app=web')).items.map((p) => p.metadata.name);
    await kubectl('rollout', 'restart', 'deployment/web');
    await kubectl('rollout', 'status', 'deployment/web', '--timeout=120s');
    await kubectl('scale', 'deployment/web', '--replicas=3');
    await kubectl('rollout', 'status', 'deployment/web', '--timeout=120s');
    const after = (await json<{ items: { metadata: { name: string; deletionTimestamp?: string } }[] }>('get', 'pods', '-l', 'app=web')).items.filter((p) => !p.metadata.deletionTimestamp).map((p) => p.metadata.name);
    expect(after).toHaveLength(3);
    expect(after.filter((p) => before.includes(p))).toEqual([]);
  });

  it('drain evicts through a PodDisruptionBudget and never below it', async () => {
    await kubectl('create', 'poddisruptionbudget', 'web', '--selector=app=web', '--min-available=2');
    const node = cluster.get().nodes[0]!.name;
    const onNode = async () => (await json<{ items: { spec: { nodeName: string }; metadata: { deletionTimestamp?: string } }[] }>('get', 'pods', '-l', 'app=web')).items.filter((p) => p.spec.nodeName === node).length;
    expect(await onNode()).toBeGreaterThan(0);
    // While kubectl drains, the pods that count for the budget (Ready, not being deleted) are
    // sampled every 100 ms: the eviction API must never let them fall below minAvailable.
    let draining = true;
    let fewest = Infinity;
    const client = cluster.client();
    const sampler = (async () => {
      while (draining) {
        const { body } = await client.request<{ items: { metadata: { deletionTimestamp?: string }; status?: { conditions?: { type: string; status: string }[] } }[] }>('GET', '/api/v1/namespaces/default/pods', { query: { labelSelector: 'app=web' } });
        fewest = Math.min(fewest, body.items.filter((p) => !p.metadata.deletionTimestamp && p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length);
        await sleep(100);
      }
    })();
    const out = await cluster.kubectl(['drain', node, '--ignore-daemonsets', '--delete-emptydir-data', '--timeout=180s'], { timeoutMs: 200_000 }).finally(() => (draining = false));
    await sampler;
    expect(out).toMatch(/drained/);
    expect(await onNode()).toBe(0);
    expect(fewest).toBeGreaterThanOrEqual(2);
    await kubectl('uncordon', node);
  });
});
