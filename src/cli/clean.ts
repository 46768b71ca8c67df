// `zerodrop clean`: removes what crashed runs left behind (see src/state/), and prints each thing.

import { cleanKindClusters, cleanNamespaces, DEFAULT_OLDER_THAN, DEFAULT_OLDER_THAN_MS, kindCli } from '../state/clean-clusters.ts';
import { cleanLocal, removeRecord } from '../state/clean.ts';
import { loadClusterConfig } from '../providers/cluster/cluster.ts';
import { KubeClient } from '../providers/kube/client.ts';
import { kubeconfigMissing } from '../providers/kube/prerequisites.ts';
import { onPath } from '../profiles/requirements.ts';
import { durationMs, durationProblem } from '../config/checks.ts';
import { parseFlags } from '../config/flags.ts';
import { CLEAN_FLAGS } from './command-flags.ts';
import { UsageError } from '../config/usage-error.ts';

export async function clean(argv: string[]): Promise<number> {
  const { values } = parseFlags('clean', argv, CLEAN_FLAGS);
  const dryRun = values['dry-run'];
  const explicitCluster = values.kubeconfig !== undefined || values.context !== undefined;
  if (values['local-only'] && explicitCluster) throw new UsageError('clean: --local-only and --kubeconfig/--context exclude each other');
  const olderThan = values['older-than'];
  const olderThanProblem = olderThan === undefined ? undefined : durationProblem(olderThan);
  if (olderThanProblem !== undefined) throw new UsageError(`--older-than ${JSON.stringify(olderThan)}: ${olderThanProblem}`);
  if (values.all && olderThan !== undefined) throw new UsageError('clean: --all and --older-than exclude each other (--all deletes labelled namespaces of any age)');
  if (values['local-only'] && (values.all || olderThan !== undefined)) throw new UsageError('clean: --local-only and --all/--older-than exclude each other (those choose cluster namespaces)');
  const rules = { all: values.all, olderThanMs: durationMs(olderThan ?? DEFAULT_OLDER_THAN) ?? DEFAULT_OLDER_THAN_MS };
  let count = 0;
  const log = (line: string) => {
    if (/^(removed|would remove|deleted|would delete|killed|would kill|uninstalled|would uninstall) (?!record)/.test(line)) count++;
    console.log(line);
  };
  const opts = { dryRun, log };

  const local = await cleanLocal(opts);
  if (process.platform === 'linux' && process.getuid?.() === 0 && onPath('ip')) {
    const { cleanNetnsClusters } = await import('../providers/netns/leftovers.ts');
    // A cluster whose run still goes is not touched, and not mentioned: it is not a leftover.
    await cleanNetnsClusters(opts);
  }
  if (onPath('kind')) await cleanKindClusters(local.cleaned, kindCli, { ...opts, live: local.live });
  else if (local.cleaned.some((r) => r.record.kindClusters.length > 0)) {
    for (const run of local.cleaned) if (run.record.kindClusters.length > 0) run.problems.push('kind not on PATH');
    console.log(`kind not on PATH: kind clusters ${local.cleaned.flatMap((r) => r.record.kindClusters).join(', ')} left alone`);
  }
  let problems = 0;
  let namespacesChecked = false;
  if (!values['local-only']) {
    const missing = kubeconfigMissing(values.kubeconfig);
    if (missing && explicitCluster) throw new UsageError(`clean: ${missing}`);
    if (missing) console.log('no kubeconfig: no cluster namespaces looked for');
    else {
      let client: KubeClient;
      try {
        client = new KubeClient(
          loadClusterConfig({ ...(values.kubeconfig ? { kubeconfig: values.kubeconfig } : {}), ...(values.context ? { context: values.context } : {}) }),
        );
      } catch (error) {
        throw new UsageError(`clean: ${(error as Error).message}`);
      }
      try {
        const kept = await cleanNamespaces(client, { ...opts, ...rules, live: local.live, dead: local.cleaned.map((r) => r.record) });
        namespacesChecked = true;
        for (const { namespace, problem } of kept) {
          // The dead run's record stays while its namespace does: the next clean finds it by rule (a) again.
          const run = local.cleaned.find((r) => r.record.namespaces.includes(namespace));
          if (run) run.problems.push(problem);
          else problems++;
        }
      } catch (error) {
        problems++;
        console.log(`could not list namespaces on ${client.server}: ${(error as Error).message.split('\n')[0]}`);
      }
    }
  }
  for (const run of local.cleaned) {
    if (run.record.namespaces.length > 0 && !namespacesChecked) {
      // Its namespaces may still be on a cluster this clean did not look at.
      console.log(`kept record ${run.path}: its namespaces (${run.record.namespaces.join(', ')}) were not looked for`);
      continue;
    }
    removeRecord(run, opts);
    problems += run.problems.length;
  }
  const summary = dryRun ? `${count} thing(s) would be removed` : `${count} thing(s) removed`;
  console.log(`${summary}${problems > 0 ? `; ${problems} could not be` : ''}${local.live.length > 0 ? `; ${local.live.length} run(s) still going, skipped` : ''}`);
  return problems > 0 ? 1 : 0;
}
