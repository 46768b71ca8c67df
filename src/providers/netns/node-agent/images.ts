// Images without a registry: each image the harness runs maps to the program it packages, taken
// from the host (bind-mounted /usr), with the image's own default entrypoint/cmd and STOPSIGNAL
// (the Docker Official Images' Dockerfiles). A container then behaves as on a node that pulled the
// image, as far as the harness depends on it: the same program, argv and stop signal.
//
// Images of Go programs that no host package provides (STUNner's) run binaries zerodrop builds from
// their Go modules (go-module-build.ts) into its cache: the cluster hands the agent their paths
// (config.goPrograms), and each is bind-mounted where the image has it.
//
// An image not in the map, or whose program is missing on this host, is one the node cannot pull:
// the container waits with reason ErrImagePull, as the kubelet reports a failed pull
// (https://kubernetes.io/docs/concepts/containers/images/#imagepullbackoff).

import { existsSync } from 'node:fs';

export interface ImageSpec {
  /** The repository names it covers (`node` covers `node:24-alpine`, `docker.io/library/node:24`). */
  repositories: readonly string[];
  /** Host programs the image packages; the first missing one makes the image unpullable. */
  programs: (nodeExecPath: string) => string[];
  /** ENTRYPOINT and CMD of the image. */
  entrypoint: readonly string[];
  cmd: readonly string[];
  /** STOPSIGNAL of the image; SIGTERM when the Dockerfile sets none. */
  stopSignal: NodeJS.Signals;
  /** Node.js images: the agent's Node.js is bind-mounted at /.zerodrop/bin/node, first on PATH. */
  node?: boolean;
  /**
   * Images of programs built from Go modules: container path -> program name in config.goPrograms.
   * A path under /.zerodrop/bin is on PATH (the host's /usr is mounted read-only, so a program
   * the image keeps in /usr/bin is put there instead).
   */
  goBinaries?: Readonly<Record<string, string>>;
  /** The command that builds goBinaries into the cache, for the ErrImagePull message when they are not built. */
  build?: string;
}

/** Programs built from Go modules: name -> host path (the agent's config.goPrograms). */
export type GoPrograms = Readonly<Record<string, string>>;

/** Where a `node:*` container finds Node.js: first on its PATH. */
export const NODE_BIN_DIR = '/.zerodrop/bin';
/** The PATH of the official images (Debian and Alpine alike). */
export const IMAGE_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * The image map. Entrypoint scripts of the official images (docker-entrypoint.sh) only prepare
 * configuration the harness supplies itself, so the program runs directly.
 */
export const IMAGE_MAP: readonly ImageSpec[] = [
  { repositories: ['node'], programs: (node) => [node], entrypoint: [], cmd: ['node'], stopSignal: 'SIGTERM', node: true },
  // nginx's Dockerfile: STOPSIGNAL SIGQUIT (graceful shutdown), CMD ["nginx", "-g", "daemon off;"].
  { repositories: ['nginx'], programs: () => ['/usr/sbin/nginx'], entrypoint: [], cmd: ['nginx', '-g', 'daemon off;'], stopSignal: 'SIGQUIT' },
  // haproxy's Dockerfile: STOPSIGNAL SIGUSR1 (soft-stop).
  { repositories: ['haproxy'], programs: () => ['/usr/sbin/haproxy'], entrypoint: [], cmd: ['haproxy', '-f', '/usr/local/etc/haproxy/haproxy.cfg'], stopSignal: 'SIGUSR1' },
  { repositories: ['caddy'], programs: () => ['/usr/bin/caddy'], entrypoint: [], cmd: ['caddy', 'run', '--config', '/etc/caddy/Caddyfile', '--adapter', 'caddyfile'], stopSignal: 'SIGTERM' },
  { repositories: ['coturn/coturn'], programs: () => ['/usr/bin/turnserver'], entrypoint: ['turnserver'], cmd: ['--log-file=stdout'], stopSignal: 'SIGTERM' },
  // l7mp/stunner Dockerfile: stunnerd in /usr/bin, CMD ["stunnerd", "-c", "/stunnerd.conf"], no
  // STOPSIGNAL. The operator's Dataplane sets the command and args itself.
  { repositories: ['l7mp/stunnerd'], programs: () => [], entrypoint: [], cmd: ['stunnerd', '-c', '/stunnerd.conf'], stopSignal: 'SIGTERM', goBinaries: { [`${NODE_BIN_DIR}/stunnerd`]: 'stunnerd' }, build: 'npm run stunner:build' },
  // l7mp/stunner-gateway-operator Dockerfile: the binary at /manager, ENTRYPOINT ["/manager"].
  { repositories: ['l7mp/stunner-gateway-operator'], programs: () => [], entrypoint: ['/manager'], cmd: [], stopSignal: 'SIGTERM', goBinaries: { '/manager': 'stunner-gateway-operator' }, build: 'npm run stunner:build' },
  // The traefik image (docker-library's and traefik/traefik): the binary in /usr/local/bin, no
  // STOPSIGNAL, ENTRYPOINT /entrypoint.sh, which runs `traefik "$@"` when the arguments are flags,
  // as its Helm chart passes them.
  { repositories: ['traefik', 'traefik/traefik'], programs: () => [], entrypoint: ['traefik'], cmd: [], stopSignal: 'SIGTERM', goBinaries: { [`${NODE_BIN_DIR}/traefik`]: 'traefik' }, build: 'npm run traefik:build' },
  { repositories: ['busybox'], programs: () => ['/bin/sh'], entrypoint: [], cmd: ['sh'], stopSignal: 'SIGTERM' },
  { repositories: ['alpine'], programs: () => ['/bin/sh'], entrypoint: [], cmd: ['/bin/sh'], stopSignal: 'SIGTERM' },
];

/** `docker.io/library/nginx:1.29-alpine@sha256:...` -> `nginx`. */
export function repositoryOf(image: string): string {
  let ref = image.split('@')[0]!;
  const lastSlash = ref.lastIndexOf('/');
  const colon = ref.lastIndexOf(':');
  if (colon > lastSlash) ref = ref.slice(0, colon);
  const parts = ref.split('/');
  // A first component with a dot, a colon or `localhost` is a registry host.
  if (parts.length > 1 && /[.:]|^localhost$/.test(parts[0]!)) parts.shift();
  if (parts[0] === 'library') parts.shift();
  return parts.join('/');
}

export type ResolvedImage = { ok: true; spec: ImageSpec } | { ok: false; message: string };

/** The image's spec, or the ErrImagePull message naming the map and what is missing. */
export function resolveImage(image: string, nodeExecPath: string, exists: (path: string) => boolean = existsSync, goPrograms: GoPrograms = {}): ResolvedImage {
  const repository = repositoryOf(image);
  const spec = IMAGE_MAP.find((s) => s.repositories.includes(repository));
  if (!spec) {
    const known = IMAGE_MAP.flatMap((s) => s.repositories).join(', ');
    return { ok: false, message: `Failed to pull image "${image}": zerodrop node agent image map (node-agent/images.ts) has no entry for repository "${repository}" (known: ${known})` };
  }
  for (const program of spec.programs(nodeExecPath)) {
    if (!exists(program)) return { ok: false, message: `Failed to pull image "${image}": zerodrop node agent image map (node-agent/images.ts) runs ${program} for it, which is not on this host` };
  }
  for (const name of Object.values(spec.goBinaries ?? {})) {
    const path = goPrograms[name];
    if (!path || !exists(path)) {
      return { ok: false, message: `Failed to pull image "${image}": zerodrop node agent image map (node-agent/images.ts) runs ${name} for it, built from a Go module, and this cluster has no build of it (${spec.build ?? 'build it'}, then start the cluster)` };
    }
  }
  return { ok: true, spec };
}

/** The argv a container runs (https://kubernetes.io/docs/tasks/inject-data-application/define-command-argument-container/#notes). */
export function containerArgv(spec: ImageSpec, command: readonly string[] | undefined, args: readonly string[] | undefined): string[] {
  if (command && command.length > 0) return [...command, ...(args ?? [])];
  if (args && args.length > 0) return [...spec.entrypoint, ...args];
  return [...spec.entrypoint, ...spec.cmd];
}

/** The container's stop signal: lifecycle.stopSignal (KEP-4960) or the image's STOPSIGNAL. */
export function stopSignalOf(spec: ImageSpec | undefined, stated: string | undefined): NodeJS.Signals {
  if (stated) return (stated.startsWith('SIG') ? stated : `SIG${stated}`) as NodeJS.Signals;
  return spec?.stopSignal ?? 'SIGTERM';
}

export function imagePath(spec: ImageSpec): string {
  const onBin = spec.node === true || Object.keys(spec.goBinaries ?? {}).some((p) => p.startsWith(`${NODE_BIN_DIR}/`));
  return onBin ? `${NODE_BIN_DIR}:${IMAGE_PATH}` : IMAGE_PATH;
}

/** The bind mounts of a Go-built image's programs: host path -> container path. */
export function goProgramBinds(spec: ImageSpec, goPrograms: GoPrograms): { source: string; target: string }[] {
  return Object.entries(spec.goBinaries ?? {}).map(([target, name]) => ({ source: goPrograms[name]!, target }));
}
