// Limits of the machine a local run is sized against. Node has no getrlimit: the shell's `ulimit -n`
// is the soft limit on open files that every pod (a child process) inherits, and the harness too.

import { execFileSync } from 'node:child_process';
import { ProfileCannotCarry } from './profile.ts';

let nofile: number | undefined;

/** The soft limit on open files of this process and its children; Infinity when unlimited. */
export function openFileLimit(): number {
  if (nofile === undefined) {
    // /bin/sh by its path: a run's PATH may hold no shell. A limit that cannot be read refuses nothing.
    let out = 'unlimited';
    try {
      out = execFileSync('/bin/sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim();
    } catch {
      // left unlimited
    }
    nofile = out === 'unlimited' || !Number.isFinite(Number(out)) ? Infinity : Number(out);
  }
  return nofile;
}

/** Open files the harness holds per client connection: the client's socket, and the Service balancer's two. */
const HARNESS_FILES_PER_CONNECTION = 3;
/** Files the harness needs besides: its own, the pods' pipes, probes, the backend Service's balancer. */
const HARNESS_FILES_BASE = 1024;

/**
 * Refuses a scenario whose client connections would exhaust the harness's open files (a false fail:
 * EMFILE reads as refused connections), naming the limit.
 */
export function checkHarnessFiles(connections: number, what: string, limit = openFileLimit()): void {
  const needed = connections * HARNESS_FILES_PER_CONNECTION + HARNESS_FILES_BASE;
  if (needed > limit) {
    const most = Math.floor((limit - HARNESS_FILES_BASE) / HARNESS_FILES_PER_CONNECTION);
    throw new ProfileCannotCarry(`${connections} ${what} need about ${needed} open files in the harness, above its limit of ${limit} (ulimit -n); raise the limit or use at most ${most}`);
  }
}
