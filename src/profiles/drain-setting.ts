// A drain setting as a team writes it in defineProfile's `drainSettings`: what the setting is, why
// the profile carries it, what taking it out changes, the scenarios that must then fail, and the
// weakening itself as data (never code), so that the ablated profile `<profile>-without-<name>` is
// derived the same way for zerodrop's own profiles and a team's (ablation.ts).

import { z } from 'zod';
import { dropTemplateLines, preStopWithoutMargin, type DrainSetting } from './ablation.ts';

export interface DrainSettingDefinition {
  /** Short, stable: it names the ablated profile (`<profile>-without-<name>`). */
  name: string;
  /** Why the profile carries it. */
  why: string;
  /** What the ablation does to it, in words (`the keepalive_time line removed`). */
  change: string;
  /** Scenarios that must fail, every run, without it; `[]` when no scenario catches it yet. */
  caughtBy: string[];
  // The weakening: exactly one of the five below.
  /** Template lines containing any of these markers are left out (each marker must match a line). */
  dropLines?: string[];
  /** The pod's preStop hook, or its stop signal (back to SIGTERM), taken out. */
  remove?: 'preStop' | 'stopSignal';
  /** terminationGracePeriodSeconds weakened to the minimum drain (what the preStop waits) + 1 s. */
  grace?: 'preStop+1';
  /** These variables of the pod's env unset. */
  unsetEnv?: string[];
  /**
   * `none`: the preStop's sleep cut to the Service's programming delay, rounded up to whole seconds
   * (and the minimum drain with it): a preStop sized to the deprogramming delay, with no margin.
   */
  margin?: 'none';
}

const WEAKENINGS = ['dropLines', 'remove', 'grace', 'unsetEnv', 'margin'] as const;

export const DRAIN_SETTING_SCHEMA = z
  .strictObject({
    name: z.string({ error: 'must be a short name' }).regex(/^[a-z0-9]([-_a-z0-9]*[a-z0-9])?$/, 'must be lower case letters, digits, - and _ (it names <profile>-without-<name>)'),
    why: z.string({ error: 'must say why the profile carries the setting' }).min(1, 'must not be empty'),
    change: z.string({ error: 'must say what the ablation does to the setting' }).min(1, 'must not be empty'),
    caughtBy: z.array(z.string().min(1), { error: 'must list the scenarios that fail without the setting ([] when none does yet)' }),
    dropLines: z.array(z.string().min(1), { error: 'must be template line markers, e.g. ["keepalive_time ${KEEPALIVE_TIME_SECONDS}s;"]' }).min(1).optional(),
    remove: z.enum(['preStop', 'stopSignal'], { error: 'must be "preStop" or "stopSignal"' }).optional(),
    grace: z.literal('preStop+1', { error: 'must be "preStop+1"' }).optional(),
    unsetEnv: z.array(z.string().regex(/^[A-Z_][A-Z0-9_]*$/), { error: 'must be names of the pod\'s env variables' }).min(1).optional(),
    margin: z.literal('none', { error: 'must be "none"' }).optional(),
  })
  .refine((s) => WEAKENINGS.filter((w) => s[w] !== undefined).length === 1, {
    error: 'must weaken the setting in exactly one way: dropLines, remove, grace, unsetEnv or margin',
  });

/** The setting with its weakening as a function of the plan (what ablation.ts applies). */
export function compileDrainSetting(s: DrainSettingDefinition): DrainSetting {
  const { name, why, change, caughtBy } = s;
  const base = { name, why, change, caughtBy };
  if (s.dropLines) return { ...base, weaken: dropTemplateLines(...s.dropLines) };
  if (s.remove === 'preStop') return { ...base, weaken: ({ preStop: _, ...plan }) => plan };
  if (s.remove === 'stopSignal') return { ...base, weaken: ({ stopSignal: _, ...plan }) => plan };
  if (s.margin === 'none') return { ...base, weaken: preStopWithoutMargin };
  if (s.grace === 'preStop+1') return { ...base, weaken: (plan) => ({ ...plan, terminationGracePeriodSeconds: (plan.drain?.minDrainSeconds ?? 0) + 1 }) };
  const unset = new Set(s.unsetEnv ?? []);
  return { ...base, weaken: (plan) => ({ ...plan, env: Object.fromEntries(Object.entries(plan.env).filter(([k]) => !unset.has(k))) }) };
}
