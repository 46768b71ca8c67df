// Ablations: every setting a drain-correct profile carries for its drain must be proven necessary
// (docs/architecture.md). A profile lists its drain settings, each with how to take
// it out or weaken it and the scenarios that must then fail; the ablated profiles are derived from
// that list, never written by hand, so that a setting added to a profile without a catching
// scenario shows up as an ablation that passes (suites/gateways/ablations.test.ts, docs/drain-settings.md).

import type { PreStop } from '../model/workload.ts';
import type { GatewayPlan, GatewayRequest, Profile } from './profile.ts';

export interface DrainSetting {
  /** Short, stable: it names the ablated profile (`<profile>-without-<name>`). */
  name: string;
  /** Why the profile carries it, as its comments say. */
  why: string;
  /** What the ablation does to it (removed, or weakened to what). */
  change: string;
  /** Scenarios that must fail, every run, without it. */
  caughtBy: string[];
  /** The plan without the setting. */
  weaken(plan: GatewayPlan, request: GatewayRequest): GatewayPlan;
}

/** Where an ablated profile comes from, and what it must fail. */
export interface AblationOf {
  profile: string;
  setting: string;
  caughtBy: string[];
}

/** Env that fixtures/gateways/render.mjs reads: template lines containing one of these markers go. */
export const DROP_LINES_ENV = 'ZERODROP_DROP_LINES';

/** A weakening that removes the template lines containing `markers` (each must match a line). */
export function dropTemplateLines(...markers: string[]): DrainSetting['weaken'] {
  return (plan) => {
    const already = plan.env[DROP_LINES_ENV];
    return { ...plan, env: { ...plan.env, [DROP_LINES_ENV]: [...(already ? [already] : []), ...markers].join('\n') } };
  };
}

/** A preStop's trailing sleep (a sleep hook, or an exec hook whose command ends in `sleep N`) set to `seconds`. */
function sleepCutTo(hook: PreStop | undefined, seconds: number): PreStop {
  if (hook === undefined) throw new Error('the plan has no preStop hook to take the margin from');
  if ('sleep' in hook) return { sleep: { seconds } };
  const command = [...hook.exec.command];
  const last = command.length - 1;
  const trailing = /\bsleep\s+\d+(\.\d+)?\s*$/;
  const script = command[last];
  // An exec hook that does not end in a sleep would run unedited: refuse rather than ablate nothing.
  if (script === undefined || !trailing.test(script)) throw new Error(`the preStop exec hook does not end in \`sleep N\`: ${JSON.stringify(hook.exec.command)}`);
  command[last] = script.replace(trailing, `sleep ${seconds}`);
  return { exec: { command } };
}

/**
 * The preStop sized to the Service's programming delay exactly (rounded up to whole seconds, as a
 * team would write it) and the minimum drain with it: no margin for the nodes that deprogram the pod
 * later than the delay.
 */
export function preStopWithoutMargin(plan: GatewayPlan, request: GatewayRequest): GatewayPlan {
  const seconds = Math.max(1, Math.ceil((request.programmingDelayMs ?? 0) / 1000));
  return { ...plan, preStop: sleepCutTo(plan.preStop, seconds), ...(plan.drain ? { drain: { ...plan.drain, minDrainSeconds: seconds } } : {}) };
}

export function ablatedName(profile: string, setting: string): string {
  return `${profile}-without-${setting}`;
}

/** The profile with one drain setting taken out. */
export function ablatedProfile(profile: Profile, setting: DrainSetting): Profile {
  const gateway = profile.gateway;
  if (!gateway) throw new Error(`profile ${profile.name}: drain settings are defined for gateway profiles only`);
  return {
    name: ablatedName(profile.name, setting.name),
    kind: 'ablation',
    description: `${profile.name} with ${setting.change}: ${setting.why}`,
    requires: profile.requires,
    ablation: { profile: profile.name, setting: setting.name, caughtBy: setting.caughtBy },
    gateway: (request) => setting.weaken(gateway(request), request),
  };
}

/** Every ablation of every profile that lists drain settings, in the profiles' order. */
export function ablationsOf(profiles: readonly Profile[]): Profile[] {
  return profiles.flatMap((p) => (p.drainSettings ?? []).map((s) => ablatedProfile(p, s)));
}
