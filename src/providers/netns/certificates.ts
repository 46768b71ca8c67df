// The cluster's certificates, made with the openssl command (node:crypto makes keys but no X.509
// certificates). One CA signs everything: the API server's serving certificate, the admin client
// certificate every component and the harness use (group system:masters), etcd's serving and client
// certificates, the API server's client certificate towards the node agents, and each node agent's
// serving certificate. EC P-256 keys: quick to make, accepted everywhere here.
// https://kubernetes.io/docs/setup/best-practices/certificates/

import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';

export interface CertPair {
  cert: string;
  key: string;
}

export interface ClusterCertificates {
  ca: CertPair;
  apiServer: CertPair;
  admin: CertPair;
  etcdServer: CertPair;
  etcdClient: CertPair;
  kubeletClient: CertPair;
  /** The API server's identity towards aggregated API servers (the request-header client). */
  frontProxyClient: CertPair;
  nodes: CertPair[];
  /** The service-account token signing key and its public half. */
  serviceAccount: { key: string; pub: string };
}

const DAYS = '7';

async function key(path: string): Promise<void> {
  await execa('openssl', ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', path]);
}

async function signed(dir: string, name: string, ca: CertPair, subject: string, ext: string): Promise<CertPair> {
  const pair = { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
  await key(pair.key);
  const extFile = join(dir, `${name}.ext`);
  await writeFile(extFile, ext);
  const csr = join(dir, `${name}.csr`);
  await execa('openssl', ['req', '-new', '-key', pair.key, '-subj', subject, '-out', csr]);
  await execa('openssl', ['x509', '-req', '-in', csr, '-CA', ca.cert, '-CAkey', ca.key, '-CAcreateserial', '-days', DAYS, '-extfile', extFile, '-out', pair.cert]);
  return pair;
}

const SERVER = 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth';
const CLIENT = 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth';
const sans = (ips: string[], dns: string[] = []): string => `\nsubjectAltName=${[...ips.map((a) => `IP:${a}`), ...dns.map((d) => `DNS:${d}`)].join(',')}`;

export async function makeCertificates(
  dir: string,
  addresses: { controlPlane: string; apiServiceIP: string; nodes: { name: string; ip: string }[] },
): Promise<ClusterCertificates> {
  await mkdir(dir, { recursive: true });
  const ca = { cert: join(dir, 'ca.crt'), key: join(dir, 'ca.key') };
  await key(ca.key);
  await execa('openssl', ['req', '-x509', '-new', '-key', ca.key, '-subj', '/CN=zerodrop-cluster-ca', '-days', DAYS, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign,digitalSignature', '-out', ca.cert]);
  const apiServer = await signed(dir, 'apiserver', ca, '/CN=kube-apiserver', SERVER + sans([addresses.controlPlane, addresses.apiServiceIP], ['kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local']));
  const admin = await signed(dir, 'admin', ca, '/O=system:masters/CN=zerodrop-admin', CLIENT);
  // etcd listens on the control plane namespace's own loopback only.
  const etcdServer = await signed(dir, 'etcd-server', ca, '/CN=etcd', SERVER + sans(['127.0.0.1']));
  const etcdClient = await signed(dir, 'etcd-client', ca, '/CN=kube-apiserver-etcd-client', CLIENT);
  const kubeletClient = await signed(dir, 'kubelet-client', ca, '/O=system:masters/CN=kube-apiserver-kubelet-client', CLIENT);
  const frontProxyClient = await signed(dir, 'front-proxy-client', ca, '/CN=front-proxy-client', CLIENT);
  const nodes: CertPair[] = [];
  for (const node of addresses.nodes) nodes.push(await signed(dir, `node-${node.name}`, ca, `/O=system:nodes/CN=system:node:${node.name}`, SERVER + sans([node.ip], [node.name])));
  const serviceAccount = { key: join(dir, 'sa.key'), pub: join(dir, 'sa.pub') };
  await key(serviceAccount.key);
  await execa('openssl', ['pkey', '-in', serviceAccount.key, '-pubout', '-out', serviceAccount.pub]);
  return { ca, apiServer, admin, etcdServer, etcdClient, kubeletClient, frontProxyClient, nodes, serviceAccount };
}

/** A kubeconfig for the admin identity, certificates embedded so it can be copied anywhere. */
export async function adminKubeconfig(path: string, server: string, certs: ClusterCertificates, readFile: (p: string) => Promise<string>): Promise<void> {
  const b64 = async (p: string): Promise<string> => Buffer.from(await readFile(p)).toString('base64');
  const text = [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: zerodrop',
    '  cluster:',
    `    server: ${server}`,
    `    certificate-authority-data: ${await b64(certs.ca.cert)}`,
    'users:',
    '- name: zerodrop-admin',
    '  user:',
    `    client-certificate-data: ${await b64(certs.admin.cert)}`,
    `    client-key-data: ${await b64(certs.admin.key)}`,
    'contexts:',
    '- name: zerodrop',
    '  context:',
    '    cluster: zerodrop',
    '    user: zerodrop-admin',
    'current-context: zerodrop',
    '',
  ].join('\n');
  await writeFile(path, text, { mode: 0o600 });
}
