// The shell script that turns a process into a container, run as
//   nsenter --net=/run/netns/<pod netns> -- unshare --mount --uts --propagation private -- sh SCRIPT ENV... ARGV...
// It sets the pod's hostname in its own UTS namespace (a pod's hostname is its name,
// https://kubernetes.io/docs/concepts/services-networking/dns-pod-service/#pod-hostname), and in
// its private mount namespace it builds the container's root on a tmpfs: the host's /usr and
// /etc read-only (the "image": programs come from the host, images.ts), /proc /sys /dev, the
// usr-merge links (/bin -> usr/bin ...) as on the host, fresh tmpfs /tmp /run /var, the pod's
// /etc/hosts, each volume at its mountPath (readOnly honoured), for Node.js images the agent's
// node at /.zerodrop/bin/node, and for images of Go-built programs those programs. Then it execs
//   chroot ROOT /usr/bin/env -i -C WORKDIR NAME=VALUE... ARGV...
// Just before, it writes `started` on fd 3 (a pipe to the agent). Each exec keeps the PID, so the process the agent spawned is the container's main process, and
// the mounts vanish with the mount namespace when its last process exits.

import { lstatSync, readlinkSync } from 'node:fs';

export interface RootfsMount {
  /** Host path (a directory, or a file for a subPath of a file). */
  source: string;
  /** Absolute path in the container. */
  target: string;
  readOnly: boolean;
  file: boolean;
}

export interface RootfsSpec {
  root: string;
  mounts: readonly RootfsMount[];
  /** The host file bind-mounted over /etc/hosts. */
  hostsFile?: string;
  /** The pod's hostname, set in the container's UTS namespace (unshare --uts). */
  hostname?: string;
  /** The Node.js binary to mount at /.zerodrop/bin/node. */
  nodeExec?: string;
  /** Host files (programs built from Go modules) bind-mounted read-only at container paths. */
  programs?: readonly { source: string; target: string }[];
  workingDir: string;
  /** Top-level names that are symlinks on the host (usr-merge): name -> link target. */
  links: Readonly<Record<string, string>>;
  /** Top-level host directories that are not links and are bind-mounted read-only as they are. */
  binds: readonly string[];
}

/** Single-quotes a word for sh. */
export function shQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** How /bin, /lib, /lib64, /sbin are on this host: links to usr/ (usr-merge) or directories of their own. */
export function hostTopLevel(): { links: Record<string, string>; binds: string[] } {
  const links: Record<string, string> = {};
  const binds: string[] = [];
  for (const name of ['bin', 'lib', 'lib32', 'lib64', 'libx32', 'sbin']) {
    try {
      const stat = lstatSync(`/${name}`);
      if (stat.isSymbolicLink()) links[name] = readlinkSync(`/${name}`);
      else if (stat.isDirectory()) binds.push(name);
    } catch {
      // not on this host
    }
  }
  return { links, binds };
}

export function rootfsScript(spec: RootfsSpec): string {
  const R = '"$R"';
  const lines = [
    'set -eu',
    `R=${shQuote(spec.root)}`,
    ...(spec.hostname ? [`hostname ${shQuote(spec.hostname)}`] : []),
    `mount -t tmpfs -o mode=755 zerodrop-root ${R}`,
    `mkdir -p ${R}/usr ${R}/etc ${R}/proc ${R}/sys ${R}/dev ${R}/tmp ${R}/run ${R}/var ${R}/root`,
    `mount --rbind /usr ${R}/usr`,
    `mount -o remount,bind,ro ${R}/usr`,
    `mount --rbind /etc ${R}/etc`,
    `mount -o remount,bind,ro ${R}/etc`,
    `mount --rbind /proc ${R}/proc`,
    `mount --rbind /sys ${R}/sys`,
    `mount --rbind /dev ${R}/dev`,
  ];
  for (const [name, target] of Object.entries(spec.links)) lines.push(`ln -s ${shQuote(target)} ${R}/${name}`);
  for (const name of spec.binds) lines.push(`mkdir -p ${R}/${name}`, `mount --rbind /${name} ${R}/${name}`, `mount -o remount,bind,ro ${R}/${name}`);
  lines.push(
    `mount -t tmpfs -o mode=1777 zerodrop-tmp ${R}/tmp`,
    `mount -t tmpfs -o mode=755 zerodrop-run ${R}/run`,
    `mount -t tmpfs -o mode=755 zerodrop-var ${R}/var`,
    `mkdir -p ${R}/var/log ${R}/var/lib ${R}/var/tmp ${R}/var/cache ${R}/var/run`,
    `chmod 1777 ${R}/var/tmp`,
  );
  if (spec.hostsFile) lines.push(`mount --bind ${shQuote(spec.hostsFile)} ${R}/etc/hosts`);
  if (spec.nodeExec) {
    lines.push(`mkdir -p ${R}/.zerodrop/bin`, `touch ${R}/.zerodrop/bin/node`, `mount --bind ${shQuote(spec.nodeExec)} ${R}/.zerodrop/bin/node`);
  }
  for (const p of spec.programs ?? []) {
    const target = `${R}${shQuote(p.target)}`;
    lines.push(`mkdir -p "$(dirname ${target})"`, `touch ${target}`, `mount --bind ${shQuote(p.source)} ${target}`, `mount -o remount,bind,ro ${target}`);
  }
  for (const m of spec.mounts) {
    const target = `${R}${shQuote(m.target)}`;
    if (m.file) lines.push(`mkdir -p "$(dirname ${target})"`, `[ -e ${target} ] || touch ${target}`);
    else lines.push(`mkdir -p ${target}`);
    lines.push(`mount --bind ${shQuote(m.source)} ${target}`);
    if (m.readOnly) lines.push(`mount -o remount,bind,ro ${target}`);
  }
  // Docker creates a working directory that does not exist.
  lines.push(`mkdir -p ${R}${shQuote(spec.workingDir)} 2>/dev/null || true`);
  // Tell the agent the container is set up (fd 3, closed so the program never holds it): the
  // container counts as started, and its probes begin, once its own program runs.
  lines.push('printf started >&3', 'exec 3>&-');
  lines.push(`exec chroot ${R} /usr/bin/env -i -C ${shQuote(spec.workingDir)} "$@"`);
  return lines.join('\n') + '\n';
}

/** /etc/hosts of a pod, as the kubelet writes it (managed hosts file). */
export function hostsFile(podIP: string, hostname: string): string {
  return [
    '# Kubernetes-managed hosts file.',
    '127.0.0.1\tlocalhost',
    '::1\tlocalhost ip6-localhost ip6-loopback',
    'fe00::0\tip6-localnet',
    'fe00::0\tip6-mcastprefix',
    'fe00::1\tip6-allnodes',
    'fe00::2\tip6-allrouters',
    `${podIP}\t${hostname}`,
    '',
  ].join('\n');
}
